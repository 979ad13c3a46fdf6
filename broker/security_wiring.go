package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	kscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"samsa/broker/principal"
	"samsa/broker/security/sasl"
	"samsa/broker/security/scram"
	"samsa/broker/security/tlsconf"
	"samsa/broker/security/zkclient"
	"samsa/broker/server"
	"samsa/config"
	"samsa/peer"
	"samsa/zkutil"
)

// Transport security (docs/security.md): each listener's security protocol
// from listener.security.protocol.map decides its server.Security: SSL and
// SASL_SSL get a tlsconf.Config from the listener's ssl.* keys
// (listener.name.<l>.ssl.* over ssl.*), SASL_PLAINTEXT and SASL_SSL a
// sasl.Config (mechanisms, PLAIN users from JAAS, SCRAM credentials from
// the cache below). The inter-broker client (controller channel, replica
// fetchers, controlled shutdown) dials the inter-broker listener with the
// same protocol, its TLS settings and sasl.mechanism.inter.broker.protocol
// with the username/password of that listener's JAAS entry.
//
// SCRAM credentials are cached from /config/users/<user> (loaded before the
// listeners open, updated on each users/<user> change notification), so an
// authentication does no ZooKeeper read.
type securityState struct {
	tls map[string]*tlsconf.Config // by listener name; immutable map after Start
	// lastSSL holds the resolved ssl.* keys each TLS listener was last built
	// from, to reload only on a change. Owned by the config change loop.
	lastSSL map[string]map[string]string
	scram   struct {
		sync.RWMutex
		creds map[string]map[string]scram.Credential // guarded; user → mechanism → credential
	}
}

// jaasFile reads java.security.auth.login.config (the key, or
// -Djava.security.auth.login.config=... in KAFKA_OPTS); nil when unset.
func jaasFile(cfg *config.Broker) (sasl.JAAS, error) {
	file, err := zkclient.LoadJAAS(cfg.JavaSecurityAuthLoginConfig)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return file, nil
}

// listenerKey returns listener.name.<l>.<key> if supplied, else <key>.
func listenerKey(props map[string]string, listener, key string) (string, bool) {
	if v, ok := props["listener.name."+strings.ToLower(listener)+"."+key]; ok {
		return v, true
	}
	v, ok := props[key]
	return v, ok
}

// setUpSecurity builds every listener's security before the server starts.
func (b *Broker) setUpSecurity() error {
	st := &securityState{tls: map[string]*tlsconf.Config{}, lastSSL: map[string]map[string]string{}}
	st.scram.creds = map[string]map[string]scram.Credential{}
	b.sec = st
	props := b.topicDefaults().Supplied()
	for _, l := range b.cfg.Listeners() {
		if !strings.HasSuffix(l.SecurityProtocol, "SSL") {
			continue
		}
		keys := tlsconf.Resolve(props, l.Name, l.SecurityProtocol == "SASL_SSL")
		c, err := tlsconf.New(keys, true)
		if err != nil {
			return fmt.Errorf("broker: listener %s: %w", l.Name, err)
		}
		st.tls[l.Name], st.lastSSL[l.Name] = c, keys
	}
	for _, l := range b.cfg.Listeners() {
		if strings.HasPrefix(l.SecurityProtocol, "SASL_") {
			if err := b.loadSCRAMCredentials(); err != nil {
				return fmt.Errorf("broker: read SCRAM credentials: %w", err)
			}
			break
		}
	}
	return nil
}

// listenerSecurity returns the server.Security of listener l.
func (b *Broker) listenerSecurity(l config.Listener) (server.Security, error) {
	var sec server.Security
	if c := b.sec.tls[l.Name]; c != nil {
		sec.TLS = c.ServerTLS()
		sec.CertPrincipal = func(cert *x509.Certificate) (principal.Principal, error) { return c.Mapper().Principal(cert) }
	}
	if !strings.HasPrefix(l.SecurityProtocol, "SASL_") {
		return sec, nil
	}
	props := b.cfg.Supplied()
	file, err := jaasFile(b.cfg)
	if err != nil {
		return sec, err
	}
	mechs := b.cfg.SASLEnabledMechanisms
	if v, ok := listenerKey(props, l.Name, "sasl.enabled.mechanisms"); ok {
		mechs = splitList(v)
	}
	sc := &sasl.Config{
		Mechanisms:      mechs,
		PlainUsers:      map[string]string{},
		SCRAM:           b.scramCredential,
		MaxReceiveSize:  b.cfg.SASLServerMaxReceiveSize,
		FailedAuthDelay: time.Duration(b.cfg.ConnectionFailedAuthenticationDelayMs) * time.Millisecond,
		ReauthAfter:     time.Duration(b.cfg.ConnectionsMaxReauthMs) * time.Millisecond,
	}
	if v, ok := listenerKey(props, l.Name, "connections.max.reauth.ms"); ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return sec, fmt.Errorf("broker: listener %s: bad connections.max.reauth.ms %q", l.Name, v)
		}
		sc.ReauthAfter = time.Duration(ms) * time.Millisecond
	}
	for _, m := range mechs {
		switch m {
		case sasl.Plain:
			value := props["listener.name."+strings.ToLower(l.Name)+".plain.sasl.jaas.config"]
			mod, ok, err := sasl.ServerModule(value, file, l.Name, m)
			if err != nil {
				return sec, fmt.Errorf("broker: listener %s: %w", l.Name, err)
			}
			if !ok {
				return sec, fmt.Errorf("broker: listener %s enables PLAIN but no JAAS PlainLoginModule is configured (listener.name.%s.plain.sasl.jaas.config or a KafkaServer section)", l.Name, strings.ToLower(l.Name))
			}
			sc.PlainUsers = mod.PlainUsers()
		case sasl.ScramSHA256, sasl.ScramSHA512:
		default:
			b.log.WithFields(logrus.Fields{"listener": l.Name, "mechanism": m}).Warn("SASL mechanism not supported by Samsa; clients asking for it are refused")
		}
	}
	sec.SASL = sc
	return sec, nil
}

// reloadTLS re-reads each TLS listener's keystore whose resolved ssl.* keys
// changed (a dynamic listener.name.<l>.ssl.keystore.location change). Called
// by the config change loop after the dynamic broker configs were reloaded.
func (b *Broker) reloadTLS() {
	if b.sec == nil {
		return
	}
	props := b.topicDefaults().Supplied()
	for _, l := range b.cfg.Listeners() {
		c := b.sec.tls[l.Name]
		if c == nil {
			continue
		}
		keys := tlsconf.Resolve(props, l.Name, l.SecurityProtocol == "SASL_SSL")
		if mapsEqual(keys, b.sec.lastSSL[l.Name]) {
			continue
		}
		log := b.log.WithField("listener", l.Name)
		if err := c.Reload(keys, true); err != nil {
			log.WithError(err).Warn("reloading the listener's keystore failed; keeping the current one")
			continue
		}
		b.sec.lastSSL[l.Name] = keys
		log.Info("listener keystore reloaded; new connections use it")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// scramCredential is the SCRAM lookup of every SASL listener.
func (b *Broker) scramCredential(m *scram.Mechanism, user string) (scram.Credential, bool) {
	b.sec.scram.RLock()
	defer b.sec.scram.RUnlock()
	c, ok := b.sec.scram.creds[user][m.Name()]
	return c, ok
}

// loadSCRAMCredentials reads every /config/users/<user> SCRAM entry.
func (b *Broker) loadSCRAMCredentials() error {
	all, err := b.zk.GetAllEntityConfigs(zkutil.ConfigTypeUser)
	if err != nil {
		return err
	}
	creds := map[string]map[string]scram.Credential{}
	for sanitized, cfg := range all {
		if user, m := b.parseSCRAM(sanitized, cfg); len(m) > 0 {
			creds[user] = m
		}
	}
	b.sec.scram.Lock()
	b.sec.scram.creds = creds
	b.sec.scram.Unlock()
	return nil
}

// applySCRAMChange re-reads one users/<sanitized> entity after a change
// notification (users/<u>/clients/<c> paths carry quotas only).
func (b *Broker) applySCRAMChange(entityPath string) {
	if b.sec == nil {
		return
	}
	sanitized, ok := strings.CutPrefix(entityPath, zkutil.ConfigTypeUser+"/")
	if !ok || strings.Contains(sanitized, "/") {
		return
	}
	cfg, err := b.zk.GetEntityConfig(zkutil.ConfigTypeUser, sanitized)
	if err != nil {
		b.log.WithError(err).WithField("entity", entityPath).Warn("reading SCRAM credentials failed")
		return
	}
	user, m := b.parseSCRAM(sanitized, cfg)
	b.sec.scram.Lock()
	if len(m) > 0 {
		b.sec.scram.creds[user] = m
	} else {
		delete(b.sec.scram.creds, user)
	}
	b.sec.scram.Unlock()
}

// parseSCRAM returns the user name (Kafka's Sanitizer.desanitize) and its
// SCRAM credentials; malformed ones are skipped with a warning.
func (b *Broker) parseSCRAM(sanitized string, cfg map[string]string) (string, map[string]scram.Credential) {
	user := zkutil.Desanitize(sanitized)
	m := map[string]scram.Credential{}
	for _, mech := range []*scram.Mechanism{scram.SHA256, scram.SHA512} {
		v, ok := cfg[mech.Name()]
		if !ok {
			continue
		}
		c, err := scram.ParseCredential(v)
		if err != nil {
			b.log.WithError(err).WithFields(logrus.Fields{"user": user, "mechanism": mech.Name()}).Warn("ignoring a malformed SCRAM credential")
			continue
		}
		m[mech.Name()] = c
	}
	return user, m
}

// interBrokerPeerOptions returns the peer options that secure connections
// to other brokers' inter-broker listeners: TLS for SSL/SASL_SSL, and the
// SASL mechanism with this broker's JAAS credentials for SASL_*.
func (b *Broker) interBrokerPeerOptions() ([]peer.Option, error) {
	l, ok := b.cfg.InterBrokerListener()
	if !ok {
		return nil, nil
	}
	return b.listenerPeerOptions(l)
}

// controllerPeerOptions are the TLS/SASL options of the controller's
// connections: those of control.plane.listener.name when set (Kafka 2.8's
// ControllerChannelManager uses the control plane listener's security
// protocol, with sasl.mechanism.inter.broker.protocol), else the
// inter-broker listener's.
func (b *Broker) controllerPeerOptions() ([]peer.Option, error) {
	l, ok := b.cfg.ControlPlaneListener()
	if !ok {
		return b.peerSec, nil
	}
	return b.listenerPeerOptions(l)
}

// listenerPeerOptions are the client-side TLS and SASL options to reach
// other brokers' listener l (its listener.name.<l>.ssl.* and JAAS config).
func (b *Broker) listenerPeerOptions(l config.Listener) ([]peer.Option, error) {
	if l.SecurityProtocol == "PLAINTEXT" {
		return nil, nil
	}
	var opts []peer.Option
	props := b.cfg.Supplied()
	if strings.HasSuffix(l.SecurityProtocol, "SSL") {
		c, err := tlsconf.New(tlsconf.Resolve(props, l.Name, false), false)
		if err != nil {
			return nil, fmt.Errorf("broker: listener %s (client side, to other brokers): %w", l.Name, err)
		}
		dial := b.opts.Dial
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		opts = append(opts, peer.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(nc, c.ClientTLS(addr))
			if err := tc.HandshakeContext(ctx); err != nil {
				nc.Close()
				return nil, fmt.Errorf("peer: TLS handshake with %s: %w", addr, err)
			}
			return tc, nil
		}))
	}
	if strings.HasPrefix(l.SecurityProtocol, "SASL_") {
		mech := b.cfg.SASLMechanismInterBrokerProtocol
		file, err := jaasFile(b.cfg)
		if err != nil {
			return nil, err
		}
		value := props["listener.name."+strings.ToLower(l.Name)+"."+strings.ToLower(mech)+".sasl.jaas.config"]
		mod, ok, err := sasl.ServerModule(value, file, l.Name, mech)
		if err != nil {
			return nil, fmt.Errorf("broker: listener %s (client side, to other brokers): %w", l.Name, err)
		}
		user, pass := mod.Options["username"], mod.Options["password"]
		if !ok || user == "" {
			return nil, fmt.Errorf("broker: listener %s (client side, to other brokers): no JAAS username/password for %s (sasl.mechanism.inter.broker.protocol)", l.Name, mech)
		}
		switch mech {
		case sasl.Plain:
			opts = append(opts, peer.WithSASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case sasl.ScramSHA256:
			opts = append(opts, peer.WithSASL(kscram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case sasl.ScramSHA512:
			opts = append(opts, peer.WithSASL(kscram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		default:
			return nil, errors.New("broker: sasl.mechanism.inter.broker.protocol " + mech + " is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)")
		}
	}
	return opts, nil
}
