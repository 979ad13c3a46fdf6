package zkutil

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	// ListenerName is the listener's name, e.g. PLAINTEXT or INTERNAL.
	ListenerName string
	// SecurityProtocol is the protocol name, e.g. PLAINTEXT or SSL.
	SecurityProtocol string
	Host             string
	Port             int32
}

// String formats the endpoint as Kafka's registration does:
// LISTENER://host:port, with IPv6 hosts in brackets.
func (e Endpoint) String() string {
	return e.ListenerName + "://" + net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// FeatureRange is a supported feature version range (registration v5, KIP-584).
type FeatureRange struct {
	MinVersion int16 `json:"min_version"`
	MaxVersion int16 `json:"max_version"`
}

// BrokerRegistration is the data of /brokers/ids/<id> (Kafka BrokerIdZNode).
type BrokerRegistration struct {
	// ID is the broker id; it is the znode name, not part of the JSON.
	ID int32
	// Version is the JSON version: 4 by default, 5 when Features is set.
	// Decode reports the version it read (1..5).
	Version int
	// Endpoints are the advertised listeners, in order.
	Endpoints []Endpoint
	// Rack is broker.rack; empty means none (the key is omitted).
	Rack string
	// JMXPort is -1 when JMX is off.
	JMXPort int32
	// Timestamp is the registration time in ms since the epoch.
	Timestamp int64
	// Features are the supported features (v5 only).
	Features map[string]FeatureRange
}

type brokerRegistrationJSON struct {
	Version   *int                    `json:"version"`
	Host      *string                 `json:"host"`
	Port      *int32                  `json:"port"`
	JMXPort   *int32                  `json:"jmx_port"`
	Timestamp *flexInt64              `json:"timestamp"`
	Endpoints []string                `json:"endpoints,omitempty"`
	Protocols map[string]string       `json:"listener_security_protocol_map,omitempty"`
	Rack      *string                 `json:"rack,omitempty"`
	Features  map[string]FeatureRange `json:"features,omitempty"`
}

// Encode returns the JSON of the registration in Kafka's v4 layout (v5 when
// Features is set): host/port name the first PLAINTEXT endpoint (null and -1
// when there is none), as in Kafka 2.8 BrokerIdZNode.encode.
func (r BrokerRegistration) Encode() []byte {
	version := 4
	if len(r.Features) > 0 || r.Version >= 5 {
		version = 5
	}
	var host *string
	port := int32(-1)
	for _, e := range r.Endpoints {
		if e.SecurityProtocol == "PLAINTEXT" {
			h := e.Host
			host, port = &h, e.Port
			break
		}
	}
	eps := make([]string, len(r.Endpoints))
	protos := make(map[string]string, len(r.Endpoints))
	for i, e := range r.Endpoints {
		eps[i] = e.String()
		protos[e.ListenerName] = e.SecurityProtocol
	}
	ts := flexInt64(r.Timestamp)
	jmx := r.JMXPort
	j := brokerRegistrationJSON{
		Version: &version, Host: host, Port: &port, JMXPort: &jmx, Timestamp: &ts,
		Endpoints: eps, Protocols: protos,
	}
	if len(eps) == 0 {
		j.Endpoints = []string{}
		j.Protocols = map[string]string{}
	}
	if r.Rack != "" {
		rack := r.Rack
		j.Rack = &rack
	}
	if version == 5 {
		j.Features = r.Features
		if j.Features == nil {
			j.Features = map[string]FeatureRange{}
		}
	}
	return marshal(j)
}

// DecodeBrokerRegistration parses /brokers/ids/<id> data of any version 1..5.
// v1 yields one PLAINTEXT endpoint from host/port; v2+ read endpoints and map
// each listener through listener_security_protocol_map when present
// (otherwise the listener name is the protocol name). ID is left zero.
func DecodeBrokerRegistration(data []byte) (BrokerRegistration, error) {
	const kind = "broker registration"
	var j brokerRegistrationJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return BrokerRegistration{}, err
	}
	if j.Version == nil {
		return BrokerRegistration{}, malformed(kind, fmt.Errorf("missing version"))
	}
	r := BrokerRegistration{Version: *j.Version, JMXPort: -1, Features: j.Features}
	if j.JMXPort != nil {
		r.JMXPort = *j.JMXPort
	}
	if j.Timestamp != nil {
		r.Timestamp = int64(*j.Timestamp)
	}
	if j.Rack != nil {
		r.Rack = *j.Rack
	}
	if r.Version < 1 {
		return BrokerRegistration{}, malformed(kind, fmt.Errorf("unsupported version %d", r.Version))
	}
	if r.Version == 1 {
		if j.Host == nil || j.Port == nil {
			return BrokerRegistration{}, malformed(kind, fmt.Errorf("v1 lacks host or port"))
		}
		// The same port range ParseEndpoint enforces for v2+: a v1 port of -1 would
		// become an endpoint no later read (nor a client) could use.
		if *j.Port < 0 || *j.Port > 65535 {
			return BrokerRegistration{}, malformed(kind, fmt.Errorf("v1 port %d out of range", *j.Port))
		}
		r.Endpoints = []Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: *j.Host, Port: *j.Port}}
		return r, nil
	}
	for _, s := range j.Endpoints {
		e, err := ParseEndpoint(s)
		if err != nil {
			return BrokerRegistration{}, malformed(kind, err)
		}
		if p, ok := j.Protocols[e.ListenerName]; ok {
			e.SecurityProtocol = p
		}
		r.Endpoints = append(r.Endpoints, e)
	}
	return r, nil
}

// ParseEndpoint parses LISTENER://host:port (IPv6 hosts in brackets). The
// security protocol is set to the listener name; callers map it.
func ParseEndpoint(s string) (Endpoint, error) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return Endpoint{}, fmt.Errorf("endpoint %q: want LISTENER://host:port", s)
	}
	name := s[:i]
	host, portStr, err := net.SplitHostPort(s[i+3:])
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: %v", s, err)
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil || port < 0 || port > 65535 {
		return Endpoint{}, fmt.Errorf("endpoint %q: bad port", s)
	}
	return Endpoint{ListenerName: name, SecurityProtocol: name, Host: host, Port: int32(port)}, nil
}
