package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"sync/atomic"
)

// Resolve returns the ssl.* keys in force for listener (Kafka's
// ListenerName.configPrefix): listener.name.<listener lower-cased>.ssl.X
// beats ssl.X. ssl.client.auth is taken for a SASL_SSL listener only from
// the listener-prefixed key (Kafka: "applies to SASL_SSL only if
// listener-prefixed"), so pass sasl true there.
func Resolve(props map[string]string, listener string, sasl bool) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if strings.HasPrefix(k, "ssl.") {
			out[k] = v
		}
	}
	if sasl {
		delete(out, "ssl.client.auth")
	}
	prefix := "listener.name." + strings.ToLower(listener) + "."
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok && strings.HasPrefix(rest, "ssl.") {
			out[rest] = v
		}
	}
	return out
}

// Config is one listener's (or the inter-broker client's) TLS set-up. It is
// safe for concurrent use; Reload replaces it for later handshakes.
type Config struct {
	cur atomic.Pointer[built]
}

type built struct {
	server  *tls.Config // for listeners
	client  *tls.Config // for outbound connections, without ServerName
	verify  bool        // ssl.endpoint.identification.algorithm = https
	mapping *Mapper
}

// New builds a Config from resolved ssl.* keys (see Resolve). A server needs
// a keystore; a client may do without one (no client certificate).
func New(keys map[string]string, server bool) (*Config, error) {
	b, err := build(keys, server)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	c.cur.Store(b)
	return c, nil
}

// Reload re-reads the keystore and truststore (a dynamic
// listener.name.<l>.ssl.keystore.location change); on error the current
// configuration stays.
func (c *Config) Reload(keys map[string]string, server bool) error {
	b, err := build(keys, server)
	if err != nil {
		return err
	}
	c.cur.Store(b)
	return nil
}

// ServerTLS returns the tls.Config a listener wraps its connections with; each
// handshake takes the configuration current at that moment.
func (c *Config) ServerTLS() *tls.Config {
	return &tls.Config{
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return c.cur.Load().server, nil },
	}
}

// ClientTLS returns the tls.Config for an outbound connection to addr
// ("host:port"): with ssl.endpoint.identification.algorithm=https the
// server's certificate must name host; otherwise only its chain is checked.
func (c *Config) ClientTLS(addr string) *tls.Config {
	b := c.cur.Load()
	cfg := b.client.Clone()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	cfg.ServerName = host
	if !b.verify {
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true // the chain is still verified below, only the name is not
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return cfgErr("server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return cfg
}

// Dial opens a TLS connection to addr with ClientTLS, handshaking before it
// returns. It matches net.Dialer.DialContext's signature.
func (c *Config) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &tls.Dialer{Config: c.ClientTLS(addr)}
	return d.DialContext(ctx, network, addr)
}

// Mapper returns the ssl.principal.mapping.rules in force.
func (c *Config) Mapper() *Mapper { return c.cur.Load().mapping }

func build(k map[string]string, server bool) (*built, error) {
	cert, haveCert, err := loadKeyPair(k)
	if err != nil {
		return nil, err
	}
	if server && !haveCert {
		return nil, cfgErr("an SSL listener needs ssl.keystore.location (or ssl.keystore.key with ssl.keystore.certificate.chain)")
	}
	roots, err := loadTrustStore(k)
	if err != nil {
		return nil, err
	}
	minV, maxV, err := protocols(k["ssl.enabled.protocols"])
	if err != nil {
		return nil, err
	}
	suites, err := cipherSuites(k["ssl.cipher.suites"])
	if err != nil {
		return nil, err
	}
	mapping, err := NewMapper(k["ssl.principal.mapping.rules"])
	if err != nil {
		return nil, err
	}
	base := &tls.Config{MinVersion: minV, MaxVersion: maxV, CipherSuites: suites}
	b := &built{mapping: mapping, verify: true}
	switch strings.ToLower(k["ssl.endpoint.identification.algorithm"]) {
	case "https":
	case "":
		if _, given := k["ssl.endpoint.identification.algorithm"]; given {
			b.verify = false
		}
	default:
		return nil, cfgErr("ssl.endpoint.identification.algorithm %q is not https or empty", k["ssl.endpoint.identification.algorithm"])
	}
	b.server = base.Clone()
	// Full-size TLS records from the first byte: Kafka's responses are bulk
	// transfers, and small first records only cost throughput here.
	b.server.DynamicRecordSizingDisabled = true
	if haveCert {
		b.server.Certificates = []tls.Certificate{cert}
	}
	b.server.ClientCAs = roots
	switch strings.ToLower(k["ssl.client.auth"]) {
	case "", "none":
		b.server.ClientAuth = tls.NoClientCert
	case "requested":
		b.server.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		b.server.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, cfgErr("ssl.client.auth %q is not none, requested or required", k["ssl.client.auth"])
	}
	b.client = base.Clone()
	b.client.RootCAs = roots
	if haveCert {
		b.client.Certificates = []tls.Certificate{cert}
	}
	return b, nil
}

// protocols maps ssl.enabled.protocols (default TLSv1.2,TLSv1.3) to a
// version range.
func protocols(list string) (minV, maxV uint16, err error) {
	if strings.TrimSpace(list) == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	for _, p := range strings.Split(list, ",") {
		var v uint16
		switch strings.TrimSpace(p) {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		case "":
			continue
		default:
			return 0, 0, cfgErr("ssl.enabled.protocols: %q is not supported (TLSv1.2, TLSv1.3)", p)
		}
		if minV == 0 || v < minV {
			minV = v
		}
		maxV = max(maxV, v)
	}
	return minV, maxV, nil
}

// cipherSuites maps ssl.cipher.suites (Java names, which are the IANA names
// Go uses) to Go's ids. TLS 1.3 suites are always on in Go and accepted by
// name without effect. Empty: Go's defaults (Kafka: the JVM's).
func cipherSuites(list string) ([]uint16, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	byName := map[string]uint16{}
	tls13 := map[string]bool{}
	for _, s := range tls.CipherSuites() {
		byName[s.Name] = s.ID
		for _, v := range s.SupportedVersions {
			if v == tls.VersionTLS13 {
				tls13[s.Name] = true
			}
		}
	}
	var out []uint16
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		id, ok := byName[n]
		if !ok {
			return nil, cfgErr("ssl.cipher.suites: %q is not a supported cipher suite", n)
		}
		if !tls13[n] {
			out = append(out, id)
		}
	}
	return out, nil
}
