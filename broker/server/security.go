package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	"samsa/broker/principal"
	"samsa/broker/security/sasl"
)

// Security is a listener's transport security (Kafka's security protocol):
// PLAINTEXT is the zero value, SSL sets TLS, SASL_PLAINTEXT sets SASL,
// SASL_SSL sets both.
type Security struct {
	// TLS wraps every accepted connection; the handshake runs on the
	// connection's goroutine (never in the accept loop), bounded by
	// connections.max.idle.ms. nil: plaintext, where responses keep the
	// sendfile path (a *net.TCPConn); TLS connections copy.
	TLS *tls.Config
	// CertPrincipal maps the client certificate of an SSL listener's
	// connection to its principal (ssl.principal.mapping.rules); a nil
	// certificate must give User:ANONYMOUS. An error closes the connection,
	// as Kafka fails the authentication. Unused when SASL is set: there the
	// principal comes from SASL.
	CertPrincipal func(*x509.Certificate) (principal.Principal, error)
	// SASL makes the listener require SASL authentication before any request
	// but ApiVersions, SaslHandshake and SaslAuthenticate (Kafka's
	// SaslServerAuthenticator). nil: no SASL.
	SASL *sasl.Config

	// The listener's connection limits (listener.name.<l>.max.connections
	// and listener.name.<l>.max.connection.creation.rate; zero: none), and
	// whether it is the inter-broker listener, which the broker-wide
	// max.connections and max.connection.creation.rate do not count. The
	// two limits are the initial ones: SetListenerLimits changes them.
	MaxConnections            int32
	MaxConnectionCreationRate int32
	InterBroker               bool
	// ControlPlane marks the control.plane.listener.name listener: its
	// connections count in the ControlPlane metrics (plane_metrics.go).
	ControlPlane bool
}

// ListenSecure is Listen for a listener with transport security.
func (s *Server) ListenSecure(name, addr string, sec Security) (net.Addr, error) {
	if s.closing.Load() {
		return nil, ErrServerClosed
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: listener %s on %s: %w", name, addr, err)
	}
	return s.addSecureListener(name, ln, sec)
}

// tlsHandshake runs the TLS handshake of a TLS listener's connection and
// sets the certificate principal; false closes the connection.
func (c *Conn) tlsHandshake() bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	if d := c.srv.opts.IdleTimeout; d > 0 {
		tc.SetDeadline(time.Now().Add(d))
	}
	if err := tc.HandshakeContext(c.ctx); err != nil {
		c.log.WithError(err).Info("closing connection: TLS handshake failed")
		return false
	}
	tc.SetDeadline(time.Time{})
	if c.sec.SASL != nil || c.sec.CertPrincipal == nil {
		return true
	}
	var cert *x509.Certificate
	if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
		cert = certs[0]
	}
	p, err := c.sec.CertPrincipal(cert)
	if err != nil {
		c.log.WithError(err).Info("closing connection: no principal for the client certificate")
		return false
	}
	if !p.IsAnonymous() {
		c.SetPrincipal(p)
	}
	return true
}
