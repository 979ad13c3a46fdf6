package broker

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"

	"samsa/broker/server"
	"samsa/config"
)

// Connection limits (Kafka 2.8's ConnectionQuotas; server/limits.go does
// the waiting and closing): Kafka's Int.MaxValue default means "no limit",
// which broker/server spells 0. Read once at start: dynamic changes of
// these keys are stored but, as documented in dynamic_config_apply.go, not
// applied until a restart.

// limitOrNone maps Kafka's Int.MaxValue "unlimited" to server's 0.
func limitOrNone(n int32) int32 {
	if n == math.MaxInt32 {
		return 0
	}
	return n
}

// connectionLimits fills the broker-wide limits of opts.
func connectionLimits(cfg *config.Broker, opts *server.Options) error {
	opts.MaxConnections = limitOrNone(cfg.MaxConnections)
	opts.MaxConnectionCreationRate = limitOrNone(cfg.MaxConnectionCreationRate)
	opts.MaxConnectionsPerIP = limitOrNone(cfg.MaxConnectionsPerIP)
	opts.ZeroConnectionsPerIP = cfg.MaxConnectionsPerIP == 0
	overrides, err := config.ParseConnectionOverrides(cfg.MaxConnectionsPerIPOverrides)
	if err != nil {
		return fmt.Errorf("broker: max.connections.per.ip.overrides: %w", err)
	}
	if len(overrides) == 0 {
		return nil
	}
	opts.MaxConnectionsPerIPOverrides = map[string]int32{}
	for host, n := range overrides {
		// Kafka resolves each name to its address (InetAddress.getByName).
		addrs := []string{host}
		if net.ParseIP(host) == nil {
			if addrs, err = net.LookupHost(host); err != nil {
				return fmt.Errorf("broker: max.connections.per.ip.overrides: %s: %w", host, err)
			}
		}
		for _, a := range addrs {
			opts.MaxConnectionsPerIPOverrides[a] = limitOrNone(n)
			if n == 0 {
				opts.MaxConnectionsPerIPOverrides[a] = 0
			}
		}
	}
	return nil
}

// listenerLimits fills a listener's own limits into sec.
func (b *Broker) listenerLimits(l config.Listener, sec *server.Security) error {
	props := b.cfg.Supplied()
	prefix := "listener.name." + strings.ToLower(l.Name) + "."
	for key, dst := range map[string]*int32{"max.connections": &sec.MaxConnections, "max.connection.creation.rate": &sec.MaxConnectionCreationRate} {
		v, ok := props[prefix+key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("broker: %s%s: %q is not a count", prefix, key, v)
		}
		*dst = limitOrNone(int32(n))
	}
	// The inter-broker listener is exempt from the broker-wide limits, as
	// in Kafka; Samsa exempts the control plane listener too, so the
	// controller's connections never wait for client ones to close.
	sec.InterBroker = l.Name == b.cfg.InterBrokerListenerNameResolved() || l.Name == b.cfg.ControlPlaneListenerNameResolved()
	return nil
}
