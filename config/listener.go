package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Listener is one endpoint of listeners or advertised.listeners.
type Listener struct {
	Name             string // upper-cased listener name, for example "PLAINTEXT"
	Host             string // "" = default interface, "0.0.0.0" = all interfaces
	Port             int32  // 0 asks the OS for a port (tests)
	SecurityProtocol string // from listener.security.protocol.map
}

// Addr returns host:port, suitable for net.Listen and net.Dial.
func (l Listener) Addr() string {
	return net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
}

// String returns the listener in Kafka's NAME://host:port form.
func (l Listener) String() string {
	return l.Name + "://" + l.Addr()
}

// Listeners returns the endpoints the broker listens on: listeners, or
// PLAINTEXT://host.name:port when it is unset (Kafka 2.8). The Broker was
// validated, so the list parses.
func (b *Broker) Listeners() []Listener {
	raw := b.RawListeners
	if raw == "" {
		raw = "PLAINTEXT://" + net.JoinHostPort(b.HostName, strconv.Itoa(int(b.Port)))
	}
	ls, _ := parseListeners(raw, b.ListenerSecurityProtocolMap)
	return ls
}

// AdvertisedListeners returns the endpoints published in the broker's
// registration: advertised.listeners, or Listeners when it is unset. A
// listener with an empty host is published by Kafka with the machine's
// canonical host name; the broker does that substitution, not config.
func (b *Broker) AdvertisedListeners() []Listener {
	if b.RawAdvertisedListeners == "" {
		return b.Listeners()
	}
	ls, _ := parseListeners(b.RawAdvertisedListeners, b.ListenerSecurityProtocolMap)
	return ls
}

// InterBrokerListenerNameResolved returns the name of the listener brokers use
// to reach each other: inter.broker.listener.name, or the name equal to
// security.inter.broker.protocol.
func (b *Broker) InterBrokerListenerNameResolved() string {
	if b.InterBrokerListenerName != "" {
		return strings.ToUpper(b.InterBrokerListenerName)
	}
	return b.SecurityInterBrokerProtocol
}

// InterBrokerListener returns the advertised endpoint other brokers and the
// controller use to reach this broker. ok is false only for a Broker that
// was not validated.
func (b *Broker) InterBrokerListener() (l Listener, ok bool) {
	name := b.InterBrokerListenerNameResolved()
	for _, l := range b.AdvertisedListeners() {
		if l.Name == name {
			return l, true
		}
	}
	return Listener{}, false
}

// ControlPlaneListenerNameResolved returns control.plane.listener.name in
// upper case (listener names are case-insensitive, as Kafka's
// ListenerName.normalised), "" when unset.
func (b *Broker) ControlPlaneListenerNameResolved() string {
	return strings.ToUpper(b.ControlPlaneListenerName)
}

// ControlPlaneListener returns the advertised endpoint of
// control.plane.listener.name; ok is false when it is unset.
func (b *Broker) ControlPlaneListener() (l Listener, ok bool) {
	name := b.ControlPlaneListenerNameResolved()
	if name == "" {
		return Listener{}, false
	}
	for _, l := range b.AdvertisedListeners() {
		if l.Name == name {
			return l, true
		}
	}
	return Listener{}, false
}

// ControllerToBrokerListenerName is the listener the controller sends its
// requests to on every broker (Kafka's controllerToBrokerListenerName):
// control.plane.listener.name when set, else the inter-broker listener.
func (b *Broker) ControllerToBrokerListenerName() string {
	if n := b.ControlPlaneListenerNameResolved(); n != "" {
		return n
	}
	return b.InterBrokerListenerNameResolved()
}

// parseProtocolMap parses listener.security.protocol.map.
func parseProtocolMap(s string) (map[string]string, error) {
	m := make(map[string]string)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, proto, ok := strings.Cut(part, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		if !ok || name == "" || proto == "" {
			return nil, fmt.Errorf("entry %q is not NAME:PROTOCOL", part)
		}
		switch proto {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		default:
			return nil, fmt.Errorf("unknown security protocol %s", proto)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("listener %s is mapped twice", name)
		}
		m[name] = proto
	}
	return m, nil
}

// parseListeners parses a comma list of NAME://host:port (Kafka's
// EndPoint.createEndPoint: an IPv6 host may be bracketed, the port may be
// 0), checking that names are unique and mapped to a protocol.
func parseListeners(s, protocolMap string) ([]Listener, error) {
	protocols, err := parseProtocolMap(protocolMap)
	if err != nil {
		return nil, fmt.Errorf("listener.security.protocol.map: %v", err)
	}
	var out []Listener
	seen := make(map[string]bool)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, hostPort, ok := strings.Cut(part, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not NAME://host:port", part)
		}
		name = strings.ToUpper(name)
		i := strings.LastIndexByte(hostPort, ':')
		if i < 0 {
			return nil, fmt.Errorf("%q has no port", part)
		}
		host := strings.TrimSuffix(strings.TrimPrefix(hostPort[:i], "["), "]")
		port, err := strconv.ParseInt(hostPort[i+1:], 10, 32)
		if err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("%q has an invalid port", part)
		}
		if seen[name] {
			return nil, fmt.Errorf("each listener must have a different name, %s is used twice", name)
		}
		seen[name] = true
		proto, ok := protocols[name]
		if !ok {
			return nil, fmt.Errorf("no security protocol defined for listener %s in listener.security.protocol.map", name)
		}
		out = append(out, Listener{Name: name, Host: host, Port: int32(port), SecurityProtocol: proto})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no listener given")
	}
	return out, nil
}

// validateControlPlaneListener checks control.plane.listener.name as Kafka
// 2.8's KafkaConfig does: mapped in listener.security.protocol.map, one of
// advertised.listeners, and not the inter-broker listener.
func (b *Broker) validateControlPlaneListener() []error {
	name := b.ControlPlaneListenerNameResolved()
	if name == "" {
		return nil
	}
	var errs []error
	inMap := false
	for _, l := range b.Listeners() {
		if l.Name == name {
			inMap = true
		}
	}
	if !inMap {
		errs = append(errs, &KeyError{Key: "control.plane.listener.name", Value: b.ControlPlaneListenerName,
			Reason: "Listener with " + name + " defined in control.plane.listener.name not found in listeners"})
	}
	if _, ok := b.ControlPlaneListener(); !ok {
		var names []string
		for _, l := range b.AdvertisedListeners() {
			names = append(names, l.Name)
		}
		errs = append(errs, &KeyError{Key: "control.plane.listener.name", Value: b.ControlPlaneListenerName,
			Reason: "control.plane.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are " + strings.Join(names, ",")})
	}
	if name == b.InterBrokerListenerNameResolved() {
		errs = append(errs, &KeyError{Key: "control.plane.listener.name", Value: b.ControlPlaneListenerName,
			Reason: "control.plane.listener.name, when defined, should have a different value from the inter broker listener name. Currently they both have the value " + name})
	}
	return errs
}
