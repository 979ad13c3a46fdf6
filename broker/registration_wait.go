package broker

// Registration at start-up across a crashed predecessor.
//
// Kafka 2.8 (KafkaZkClient.registerBroker → checkedEphemeralCreate) fails
// at once when /brokers/ids/<id> exists and belongs to another ZooKeeper
// session, so a broker restarted within zookeeper.session.timeout.ms of a
// crash exits with NodeExistsException and the operator starts it again
// later. Samsa waits instead: an ephemeral znode of a dead process goes
// away by itself when its session expires, at most one session timeout
// (plus ZooKeeper's tick granularity) after the process died. A live
// duplicate keeps its session, so after the bounded wait the znode is still
// there and start-up fails with a clear message, as in Kafka.
//
// The registration found is described in the log as "our previous process"
// when it advertises exactly our endpoints: we have bound those ports, so
// the process that registered them no longer holds them. Anything else is
// "possibly another broker". Both are waited for: a broker restarted with
// other ports (port 0, a changed listener) is just as likely to be its own
// predecessor, and the wait is bounded either way.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/zkutil"
)

// staleRegistrationWait bounds the wait for a predecessor's registration:
// the session timeout plus a margin for ZooKeeper's expiry granularity
// (sessions expire on tick boundaries) and for the server to notice.
func staleRegistrationWait(sessionTimeout time.Duration) time.Duration {
	return sessionTimeout + max(2*time.Second, sessionTimeout/3)
}

// registerAtStart registers the broker, waiting out a registration of
// another ZooKeeper session for at most staleRegistrationWait.
func (b *Broker) registerAtStart(ctx context.Context) error {
	err := b.register()
	if !errors.Is(err, zkutil.ErrBrokerIDExists) {
		return err
	}
	sessionTimeout := time.Duration(b.cfg.ZookeeperSessionTimeoutMs) * time.Millisecond
	limit := staleRegistrationWait(sessionTimeout)
	path := zkutil.BrokerIDPath(b.ID())
	start := b.opts.Now()
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		owner := b.describeRegistration()
		b.log.WithFields(logrus.Fields{"path": path, "holder": owner, "max_wait": limit}).
			Warn("broker id is registered by another zookeeper session; waiting for that session to expire")
		werr := b.zk.AwaitDeleted(wctx, path)
		if werr == nil {
			err = b.register()
			if err == nil {
				b.log.WithField("waited", b.opts.Now().Sub(start).Round(time.Millisecond)).
					Info("the previous registration expired; registered")
				return nil
			}
			if !errors.Is(err, zkutil.ErrBrokerIDExists) {
				return err
			}
			continue // someone registered in between; wait on within the bound
		}
		if ctx.Err() != nil {
			return fmt.Errorf("broker: start-up cancelled while waiting for %s to expire: %w", path, ctx.Err())
		}
		return fmt.Errorf("broker: broker.id=%d is registered in zookeeper at %s by a live session (%s) that did not "+
			"expire within %v (zookeeper.session.timeout.ms=%d plus margin): another broker is running with this "+
			"broker.id; stop it or give this broker another broker.id: %w",
			b.ID(), path, owner, limit, b.cfg.ZookeeperSessionTimeoutMs, zkutil.ErrBrokerIDExists)
	}
}

// describeRegistration says who holds /brokers/ids/<id>, for the log and
// the final error.
func (b *Broker) describeRegistration() string {
	info, err := b.zk.GetBroker(b.ID())
	if err != nil {
		return fmt.Sprintf("unreadable: %v", err)
	}
	what := "possibly another broker"
	if sameEndpoints(info.Registration.Endpoints, b.advertisedEndpoints()) {
		what = "our previous process, which died without closing its session"
	}
	eps := make([]string, 0, len(info.Registration.Endpoints))
	for _, ep := range info.Registration.Endpoints {
		eps = append(eps, fmt.Sprintf("%s://%s:%d", ep.ListenerName, ep.Host, ep.Port))
	}
	return fmt.Sprintf("%s; endpoints %v, registered at %s", what, eps,
		time.UnixMilli(info.Registration.Timestamp).UTC().Format(time.RFC3339))
}

func sameEndpoints(a, b []zkutil.Endpoint) bool {
	return slices.EqualFunc(a, b, func(x, y zkutil.Endpoint) bool {
		return x.ListenerName == y.ListenerName && x.Host == y.Host && x.Port == y.Port
	})
}
