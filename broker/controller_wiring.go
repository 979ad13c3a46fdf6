package broker

import (
	"context"
	"time"

	"samsa/controller"
	"samsa/kafka"
	"samsa/peer"
)

// startController creates and starts this broker's controller module: every
// broker runs one; the one that wins /controller acts.
func (b *Broker) startController(ctx context.Context) error {
	sec, err := b.controllerPeerOptions()
	if err != nil {
		return err
	}
	c, err := controller.New(b.controllerConfig(sec))
	if err != nil {
		return err
	}
	b.ctrl = c
	b.replicas.SetStartAtLogEnd(b.startAtLogEnd)
	return c.Start(ctx)
}

// controllerConfig maps the broker's settings to the controller's Config.
// The controller connects with controller.PeerDialer, which pins each
// request at the version negotiated with the receiving broker, to every
// broker's control.plane.listener.name when set (KIP-291), else its
// inter-broker listener, with sec, that listener's TLS/SASL options.
func (b *Broker) controllerConfig(sec []peer.Option) controller.Config {
	pct := int(b.cfg.LeaderImbalancePerBrokerPercentage)
	if pct <= 0 {
		// controller.Config reads 0 as "default 10"; Kafka's 0 means any
		// imbalance triggers a preferred election.
		pct = -1
	}
	return controller.Config{
		BrokerID:                           b.ID(),
		Store:                              controller.StoreFromZK(b.zk),
		Dialer:                             controller.PeerDialer{ClientID: "controller-" + itoa(b.ID()), Options: b.dialOptions(sec)},
		InterBrokerListener:                b.cfg.ControllerToBrokerListenerName(),
		UncleanLeaderElectionEnable:        b.cfg.UncleanLeaderElectionEnable,
		DeleteTopicDisabled:                !b.cfg.DeleteTopicEnable,
		AutoLeaderRebalanceEnable:          b.cfg.AutoLeaderRebalanceEnable,
		LeaderImbalanceCheckInterval:       time.Duration(b.cfg.LeaderImbalanceCheckIntervalSeconds) * time.Second,
		LeaderImbalancePerBrokerPercentage: pct,
		RequestTimeout:                     time.Duration(b.cfg.ControllerSocketTimeoutMs) * time.Millisecond,
		LeaderHint:                         b.cachedLeader,
		Logger:                             b.opts.Logger.WithField("broker", b.ID()),
		Metrics:                            b.opts.Registry,
		Now:                                b.opts.Now,
	}
}

// cachedLeader is the controller's LeaderHint: the leader of tp in this
// broker's metadata cache, which only orders a new controller's failover.
func (b *Broker) cachedLeader(tp kafka.TopicPartition) (int32, bool) {
	ps, ok := b.meta.Snapshot().Partition(tp.Topic, tp.Partition)
	return ps.Leader, ok
}

// peerOptions are the options of every inter-broker client.
func (b *Broker) peerOptions() []peer.Option { return b.dialOptions(b.peerSec) }

// dialOptions are the options of a client to other brokers with sec, the
// TLS and SASL options of the listener it dials (their dialer wraps
// b.opts.Dial).
func (b *Broker) dialOptions(sec []peer.Option) []peer.Option {
	opts := []peer.Option{peer.WithLogger(b.opts.Logger.WithField("broker", b.ID()))}
	if b.opts.Dial != nil {
		opts = append(opts, peer.WithDialer(b.opts.Dial))
	}
	return append(opts, sec...)
}
