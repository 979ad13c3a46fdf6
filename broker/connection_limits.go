package broker

import (
	"fmt"
	"maps"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"samsa/broker/server"
	"samsa/config"
)

// Connection limits (Kafka 2.8's ConnectionQuotas; server/limits.go does
// the waiting and closing): Kafka's Int.MaxValue default means "no limit",
// which broker/server spells 0. They are read at start from the effective
// config (server.properties with the dynamic overrides of /config/brokers)
// and again after every dynamic broker config change, as Kafka's
// SocketServer.reconfigure and ListenerConnectionQuota.reconfigure do:
// max.connections, max.connections.per.ip, max.connections.per.ip.overrides,
// max.connection.creation.rate and, per listener,
// listener.name.<l>.max.connections and
// listener.name.<l>.max.connection.creation.rate.

// listenerLimitKeys are Kafka's SocketServer.ListenerReconfigurableConfigs.
var listenerLimitKeys = []string{"max.connections", "max.connection.creation.rate"}

// limitOrNone maps Kafka's Int.MaxValue "unlimited" to server's 0.
func limitOrNone(n int32) int32 {
	if n == math.MaxInt32 {
		return 0
	}
	return n
}

// brokerLimits returns cfg's broker-wide limits, override host names
// resolved to their addresses (Kafka's InetAddress.getByName).
func brokerLimits(cfg *config.Broker) (server.Limits, error) {
	lim := server.Limits{
		MaxConnections:            limitOrNone(cfg.MaxConnections),
		MaxConnectionCreationRate: limitOrNone(cfg.MaxConnectionCreationRate),
		MaxConnectionsPerIP:       limitOrNone(cfg.MaxConnectionsPerIP),
		ZeroConnectionsPerIP:      cfg.MaxConnectionsPerIP == 0,
	}
	overrides, err := config.ParseConnectionOverrides(cfg.MaxConnectionsPerIPOverrides)
	if err != nil {
		return lim, fmt.Errorf("broker: max.connections.per.ip.overrides: %w", err)
	}
	if len(overrides) == 0 {
		return lim, nil
	}
	lim.MaxConnectionsPerIPOverrides = map[string]int32{}
	for host, n := range overrides {
		addrs := []string{host}
		if net.ParseIP(host) == nil {
			if addrs, err = net.LookupHost(host); err != nil {
				return lim, fmt.Errorf("broker: max.connections.per.ip.overrides: %s: %w", host, err)
			}
		}
		for _, a := range addrs {
			lim.MaxConnectionsPerIPOverrides[a] = n // Int.MaxValue is as good as none; 0 admits nobody
		}
	}
	return lim, nil
}

// startLimits fills the broker-wide limits of opts from the effective
// config; when a dynamic override does not resolve, from server.properties
// (whose errors fail the start).
func (b *Broker) startLimits(opts *server.Options) error {
	lim, err := brokerLimits(b.topicDefaults())
	if err != nil && b.topicDefaults() != b.cfg {
		b.log.WithError(err).Warn("ignoring the dynamic connection limits")
		lim, err = brokerLimits(b.cfg)
	}
	if err != nil {
		return err
	}
	opts.MaxConnections, opts.MaxConnectionCreationRate = lim.MaxConnections, lim.MaxConnectionCreationRate
	opts.MaxConnectionsPerIP, opts.ZeroConnectionsPerIP = lim.MaxConnectionsPerIP, lim.ZeroConnectionsPerIP
	opts.MaxConnectionsPerIPOverrides = lim.MaxConnectionsPerIPOverrides
	return nil
}

// listenerLimitValue parses listener.name.<l>.<key> for one of
// listenerLimitKeys as Kafka's ConfigDef does (an INT, at least 0), with
// Kafka's ConfigException wording.
func listenerLimitValue(key, v string) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("Invalid value %s for configuration %s: Not a number of type INT", v, key)
	}
	if n < 0 {
		return 0, fmt.Errorf("Invalid value %s for configuration %s: Value must be at least 0", v, key)
	}
	return limitOrNone(int32(n)), nil
}

// validateListenerLimits checks every listener.name.<l>.max.connections and
// .max.connection.creation.rate in props (Kafka's validateConfigTypes, which
// validates a listener config under its base name).
func validateListenerLimits(props map[string]string) error {
	for name, v := range props {
		rest, ok := strings.CutPrefix(name, "listener.name.")
		if !ok {
			continue
		}
		if _, key, ok := strings.Cut(rest, "."); ok && (key == listenerLimitKeys[0] || key == listenerLimitKeys[1]) {
			if _, err := listenerLimitValue(key, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// listenerLimitsOf returns listener l's own limits in props.
func listenerLimitsOf(props map[string]string, l string) (maxConns, rate int32, err error) {
	prefix := "listener.name." + strings.ToLower(l) + "."
	dst := []*int32{&maxConns, &rate}
	for i, key := range listenerLimitKeys {
		if v, ok := props[prefix+key]; ok {
			if *dst[i], err = listenerLimitValue(key, v); err != nil {
				return 0, 0, err
			}
		}
	}
	return maxConns, rate, nil
}

// listenerLimits fills a listener's own limits into sec, and whether it
// is the inter-broker or control plane listener.
func (b *Broker) listenerLimits(l config.Listener, sec *server.Security) error {
	var err error
	sec.MaxConnections, sec.MaxConnectionCreationRate, err = listenerLimitsOf(b.topicDefaults().Supplied(), l.Name)
	if err != nil {
		return fmt.Errorf("broker: listener %s: %w", l.Name, err)
	}
	// The inter-broker listener is exempt from the broker-wide limits when
	// there are other listeners, as in Kafka (ConnectionQuotas.
	// protectedListener: a broker's only listener is held like any);
	// Samsa exempts the control plane listener too, so the controller's
	// connections never wait for client ones to close.
	sec.ControlPlane = l.Name == b.cfg.ControlPlaneListenerNameResolved()
	sec.InterBroker = sec.ControlPlane || (l.Name == b.cfg.InterBrokerListenerNameResolved() && len(b.cfg.Listeners()) > 1)
	return nil
}

// applyConnectionLimits gives the running server the limits of the
// effective config, logging each change; a value that does not resolve or
// parse keeps the limit in force (Kafka logs the failed reconfiguration).
func (b *Broker) applyConnectionLimits() {
	if b.srv == nil {
		return
	}
	eff := b.topicDefaults()
	lim, err := brokerLimits(eff)
	if err != nil {
		b.log.WithError(err).Warn("keeping the connection limits in force")
	} else if old := b.srv.Limits(); !limitsEqual(old, lim) {
		b.srv.SetLimits(lim)
		b.log.WithFields(logrus.Fields{"max.connections": lim.MaxConnections, "max.connection.creation.rate": lim.MaxConnectionCreationRate,
			"max.connections.per.ip": lim.MaxConnectionsPerIP, "max.connections.per.ip.overrides": lim.MaxConnectionsPerIPOverrides}).
			Info("connection limits updated (0: no limit)")
	}
	props := eff.Supplied()
	for _, l := range b.cfg.Listeners() {
		conns, rate, err := listenerLimitsOf(props, l.Name)
		if err != nil {
			b.log.WithError(err).WithField("listener", l.Name).Warn("keeping the listener's connection limits in force")
			continue
		}
		if oc, or, err := b.srv.ListenerLimits(l.Name); err != nil || (oc == conns && or == rate) {
			continue
		}
		if err := b.srv.SetListenerLimits(l.Name, conns, rate); err == nil {
			b.log.WithFields(logrus.Fields{"listener": l.Name, "max.connections": conns, "max.connection.creation.rate": rate}).
				Info("listener connection limits updated (0: no limit)")
		}
	}
}

func limitsEqual(a, b server.Limits) bool {
	return a.MaxConnections == b.MaxConnections && a.MaxConnectionCreationRate == b.MaxConnectionCreationRate &&
		a.MaxConnectionsPerIP == b.MaxConnectionsPerIP && a.ZeroConnectionsPerIP == b.ZeroConnectionsPerIP &&
		maps.Equal(a.MaxConnectionsPerIPOverrides, b.MaxConnectionsPerIPOverrides)
}
