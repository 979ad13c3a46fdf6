package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/replica"
	"samsa/broker/replica/remote"
	"samsa/broker/server"
	"samsa/zkutil"
)

// Start brings the broker up in the order written in doc.go and returns
// once it serves requests and is registered in ZooKeeper. ctx bounds the
// start-up only; the broker runs until Shutdown. On error everything
// started so far is stopped again.
func (b *Broker) Start(ctx context.Context) (err error) {
	b.mu.Lock()
	if b.mu.started {
		b.mu.Unlock()
		return errors.New("broker: already started")
	}
	b.mu.started = true
	runCtx, cancel := context.WithCancel(context.Background())
	b.mu.cancel = cancel
	b.mu.Unlock()
	defer func() {
		if err != nil {
			b.log.WithError(err).Error("broker start failed")
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			_ = b.Shutdown(sctx)
		}
	}()

	if err := b.connectZooKeeper(ctx); err != nil {
		return err
	}
	if err := b.resolveIdentity(); err != nil {
		return err
	}
	b.log = b.opts.Logger.WithFields(logrus.Fields{"component": "broker", "broker": b.ID()})
	if _, err := b.loadDynamicBrokerConfig(); err != nil {
		return fmt.Errorf("broker: read dynamic broker configs: %w", err)
	}
	if err := b.startAuthorizer(ctx); err != nil {
		return err
	}
	if err := b.openLogs(); err != nil {
		return err
	}
	b.topics = newTopicConfigs(b)
	rm, err := replica.New(replica.Config{
		BrokerID:          b.ID(),
		Logs:              b.logProvider(),
		TopicConfig:       b.topics.replicaTopicConfig,
		Logger:            b.opts.Logger.WithField("broker", b.ID()),
		ReplicaLagTimeMax: time.Duration(b.cfg.ReplicaLagTimeMaxMs) * time.Millisecond,
		Now:               b.opts.Now,
		Fetcher:           b.fetcherConfig(),
		Isr:               remote.IsrStore{ZK: b.zk},
	})
	if err != nil {
		return err
	}
	b.replicas = rm
	b.watchFetchChanges()
	b.replicasUp.Store(true)
	b.catchUpLogDirFailures()
	b.registerGauges()
	b.startGroupCoordinator()
	b.startTxnCoordinator()
	if err := b.setUpSecurity(); err != nil {
		return err
	}
	if b.peerSec, err = b.interBrokerPeerOptions(); err != nil {
		return err
	}
	if err := b.startServer(runCtx); err != nil {
		return err
	}
	if err := b.startMetricsListener(runCtx); err != nil {
		return err
	}
	// The hook goes in first so an expiry right after registering is not
	// missed (the signal waits in sessionCh for sessionLoop).
	b.zk.OnNewSession(b.onNewSession)
	if err := b.registerAtStart(ctx); err != nil {
		return err
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.sessionLoop(runCtx)
	}()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.configChangeLoop(runCtx)
	}()
	if err := b.startController(runCtx); err != nil {
		return err
	}
	b.awaitFirstMetadata(ctx, 10*time.Second)
	b.log.WithField("cluster_id", b.ClusterID()).Info("broker started")
	return nil
}

// awaitFirstMetadata waits (at most limit, or until ctx ends) for the
// controller's first UpdateMetadata naming this broker, so that clients
// connecting right after Start see the cluster. Kafka does not wait; a
// broker that is not told in time starts anyway.
func (b *Broker) awaitFirstMetadata(ctx context.Context, limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		next := b.metaUpdates.next()
		if b.meta.Snapshot().Alive(b.ID()) {
			return
		}
		select {
		case <-next:
		case <-t.C:
			b.log.Warn("no metadata from the controller yet; serving anyway")
			return
		case <-ctx.Done():
			return
		}
	}
}

// connectZooKeeper opens the session (creating the chroot) and the
// persistent paths Kafka 2.8 brokers create.
func (b *Broker) connectZooKeeper(ctx context.Context) error {
	timeout := time.Duration(b.cfg.ZookeeperConnectionTimeoutMs()) * time.Millisecond
	zkTLS, err := zookeeperTLS(b.cfg)
	if err != nil {
		return err
	}
	zkAuth, err := b.zookeeperAuth()
	if err != nil {
		return err
	}
	zc, err := zkutil.Connect(ctx, zkutil.Config{
		Connect:           b.cfg.RawZookeeperConnect,
		SessionTimeout:    time.Duration(b.cfg.ZookeeperSessionTimeoutMs) * time.Millisecond,
		ConnectionTimeout: timeout,
		Logger:            b.opts.Logger,
		TLS:               zkTLS,
		SecureACLs:        b.cfg.ZookeeperSetACL,
		Auth:              zkAuth,
	})
	if err != nil {
		return fmt.Errorf("broker: connect to zookeeper %q: %w", b.cfg.RawZookeeperConnect, err)
	}
	b.zk = zc
	if err := zc.CreatePersistentPaths(); err != nil {
		return fmt.Errorf("broker: create persistent zookeeper paths: %w", err)
	}
	return nil
}

// startServer binds every listener and starts serving. A listener
// configured with port 0 gets a free port; the advertised listener of the
// same name then publishes the bound port.
func (b *Broker) startServer(ctx context.Context) error {
	sopts := server.Options{
		Handler:        handler{b: b},
		Logger:         b.opts.Logger.WithField("broker", b.ID()),
		Metrics:        b.opts.Registry,
		MaxRequestSize: b.cfg.SocketRequestMaxBytes,
		IdleTimeout:    time.Duration(b.cfg.ConnectionsMaxIdleMs) * time.Millisecond,
		NetworkTime:    b.recordNetworkTime, // request_percentage (quota_request.go)
	}
	if err := b.startLimits(&sopts); err != nil {
		return err
	}
	srv, err := server.New(sopts)
	if err != nil {
		return err
	}
	b.srv = srv
	for _, l := range b.cfg.Listeners() {
		sec, err := b.listenerSecurity(l)
		if err != nil {
			return err
		}
		if err := b.listenerLimits(l, &sec); err != nil {
			return err
		}
		addr, err := srv.ListenSecure(l.Name, l.Addr(), sec)
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		b.mu.Lock()
		b.mu.addrs[l.Name] = addr
		b.mu.Unlock()
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		if err := srv.Serve(ctx); err != nil && !errors.Is(err, server.ErrServerClosed) && ctx.Err() == nil {
			b.log.WithError(err).Error("server stopped")
		}
	}()
	return nil
}

// advertisedEndpoints returns advertised.listeners with port 0 replaced by
// the bound port and an empty host by the bound host (or the machine's
// host name for a wildcard bind, as Kafka publishes the canonical host
// name).
func (b *Broker) advertisedEndpoints() []zkutil.Endpoint {
	var eps []zkutil.Endpoint
	for _, l := range b.cfg.AdvertisedListeners() {
		ep := zkutil.Endpoint{ListenerName: l.Name, SecurityProtocol: l.SecurityProtocol, Host: l.Host, Port: l.Port}
		if ep.SecurityProtocol == "" {
			ep.SecurityProtocol = l.Name
		}
		if bound, ok := b.Addr(l.Name).(*net.TCPAddr); ok {
			if ep.Port == 0 {
				ep.Port = int32(bound.Port)
			}
			if ep.Host == "" || ep.Host == "0.0.0.0" || ep.Host == "::" {
				ep.Host = advertisedHost(bound)
			}
		}
		eps = append(eps, ep)
	}
	return eps
}

func advertisedHost(bound *net.TCPAddr) string {
	if bound.IP != nil && !bound.IP.IsUnspecified() {
		return bound.IP.String()
	}
	if h, err := hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// interBrokerAddr returns "host:port" of broker id's inter-broker listener
// from the metadata cache.
func (b *Broker) interBrokerAddr(id int32) (string, bool) {
	snap := b.meta.Snapshot()
	br, ok := snap.Brokers[id]
	if !ok {
		return "", false
	}
	ep, ok := br.Endpoint(b.cfg.InterBrokerListenerNameResolved())
	if !ok {
		return "", false
	}
	return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), true
}

// Shutdown stops the broker in the order written in doc.go. It waits for
// in-flight requests until ctx ends, then cuts them. It is safe to call more
// than once and after a failed Start.
func (b *Broker) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.mu.shutdown {
		b.mu.Unlock()
		return nil
	}
	b.mu.shutdown = true
	cancel := b.mu.cancel
	b.mu.Unlock()

	var errs []error
	// 0. Controlled shutdown: leadership moves away while we still serve.
	if b.cfg.ControlledShutdownEnable && b.brokerEpoch.Load() != 0 && ctx.Err() == nil {
		if err := b.controlledShutdown(ctx); err != nil {
			b.log.WithError(err).Warn("controlled shutdown failed; shutting down anyway")
		}
	}
	// 1. Stop accepting; in-flight requests finish or are cut at ctx's end.
	// Parked long polls answer now with what they have, and the group
	// coordinator stops first so parked JoinGroup/SyncGroup calls answer
	// NOT_COORDINATOR instead of holding the shutdown for a rebalance
	// timeout (clients find the new coordinator).
	b.stopping.Store(true)
	if b.groups != nil {
		b.groups.Shutdown()
	}
	if b.txns != nil {
		b.txns.Shutdown()
		b.txnMarks.close()
	}
	if b.srv != nil {
		if b.replicas != nil {
			// Parked requests return now rather than at their deadlines.
			b.replicas.Produce.NotifyAll()
			b.replicas.Fetch.NotifyAll()
		}
		if err := b.srv.Shutdown(ctx); err != nil && !errors.Is(err, server.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("broker: server shutdown: %w", err))
		}
	}
	// 2. Resign the controller.
	if b.ctrl != nil {
		b.ctrl.Shutdown()
	}
	// 3. Stop the fetchers and wake whatever is parked.
	if b.replicas != nil {
		b.replicas.Close()
	}
	if b.fetchSrc != nil {
		b.fetchSrc.Close()
	}
	if cancel != nil {
		cancel()
	}
	b.wg.Wait()
	// 4. Flush and checkpoint the logs.
	if b.authz != nil {
		b.authz.Close()
	}
	if b.logs != nil {
		if err := b.closeLogs(); err != nil {
			errs = append(errs, err)
		}
	}
	// 5. Deregister and 6. close ZooKeeper.
	if b.zk != nil {
		if b.brokerEpoch.Load() != 0 {
			if err := b.zk.DeregisterBroker(b.ID()); err != nil {
				b.log.WithError(err).Warn("deregistering from zookeeper failed")
			}
		}
		b.zk.Close()
	}
	b.log.Info("broker shut down")
	return errors.Join(errs...)
}
