package broker

import (
	"context"
	"time"

	"samsa/broker/peer"
	"samsa/controller"
)

// startController creates and starts this broker's controller module: every
// broker runs one; the one that wins /controller acts.
func (b *Broker) startController(ctx context.Context) error {
	c, err := controller.New(controller.Config{
		BrokerID:                    b.ID(),
		Store:                       controller.StoreFromZK(b.zk),
		Dialer:                      peerDialer{clientID: "controller-" + itoa(b.ID()), opts: b.peerOptions()},
		InterBrokerListener:         b.cfg.InterBrokerListenerNameResolved(),
		UncleanLeaderElectionEnable: b.cfg.UncleanLeaderElectionEnable,
		RequestTimeout:              time.Duration(b.cfg.ControllerSocketTimeoutMs) * time.Millisecond,
		Logger:                      b.opts.Logger.WithField("broker", b.ID()),
		Metrics:                     b.opts.Registry,
		Now:                         b.opts.Now,
	})
	if err != nil {
		return err
	}
	b.ctrl = c
	return c.Start(ctx)
}

// peerOptions are the options of every inter-broker client.
func (b *Broker) peerOptions() []peer.Option {
	opts := []peer.Option{peer.WithLogger(b.opts.Logger.WithField("broker", b.ID()))}
	if b.opts.Dial != nil {
		opts = append(opts, peer.WithDialer(b.opts.Dial))
	}
	return opts
}

// peerDialer implements controller.Dialer over broker/peer.
type peerDialer struct {
	clientID string
	opts     []peer.Option
}

func (d peerDialer) Dial(ctx context.Context, addr string) (controller.RequestClient, error) {
	return peer.New(addr, d.clientID, d.opts...), nil
}
