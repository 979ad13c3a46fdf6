package server

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/security/sasl"
	"samsa/broker/wire"
	"samsa/internal/testwait"
)

// principalHandler answers Metadata with the connection's principal as the
// one broker's host, so a test can see who the server thinks it talks to.
type principalHandler struct{ *testHandler }

func (h principalHandler) Serve(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
	if body, ok := req.Body.(*kmsg.MetadataRequest); ok {
		resp := body.ResponseKind().(*kmsg.MetadataResponse)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host = 1, c.Principal().String()
		resp.Brokers = append(resp.Brokers, b)
		return resp, nil
	}
	return h.testHandler.Serve(ctx, c, req)
}

// startSASL starts a server with one SASL_PLAINTEXT listener (PLAIN user
// alice/alice-pw) and returns its address.
func startSASL(t *testing.T, mod func(*sasl.Config)) string {
	t.Helper()
	checkNoGoroutineLeak(t)
	cfg := &sasl.Config{Mechanisms: []string{sasl.Plain, sasl.ScramSHA512}, PlainUsers: map[string]string{"alice": "alice-pw"},
		MaxReceiveSize: sasl.DefaultMaxReceiveSize, FailedAuthDelay: 50 * time.Millisecond}
	if mod != nil {
		mod(cfg)
	}
	s, _, _ := startServer(t, principalHandler{newTestHandler()}, nil)
	addr, err := s.ListenSecure("SASL_PLAINTEXT", "127.0.0.1:0", Security{SASL: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return addr.String()
}

func handshake(c *client, v int16, mech string) *kmsg.SASLHandshakeResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.SetVersion(v)
	req.Mechanism = mech
	return c.roundTrip(req).(*kmsg.SASLHandshakeResponse)
}

func authenticate(c *client, v int16, token string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(v)
	req.SASLAuthBytes = []byte(token)
	return c.roundTrip(req).(*kmsg.SASLAuthenticateResponse)
}

func principalOf(c *client) string {
	c.t.Helper()
	return c.roundTrip(metadataReq(1)).(*kmsg.MetadataResponse).Brokers[0].Host
}

func TestServerSASLPlainV1(t *testing.T) {
	addr := startSASL(t, nil)
	c := dial(t, addr)
	c.roundTrip(kmsg.NewPtrApiVersionsRequest()) // allowed before authentication
	hs := handshake(c, 1, "PLAIN")
	if hs.ErrorCode != 0 || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-512" {
		t.Fatalf("handshake %+v", hs)
	}
	if ar := authenticate(c, 1, "\x00alice\x00alice-pw"); ar.ErrorCode != 0 {
		t.Fatalf("authenticate: %+v", ar)
	}
	if p := principalOf(c); p != "User:alice" {
		t.Fatalf("principal %q", p)
	}
	// After authentication the Handler answers SASL requests (ILLEGAL_SASL_STATE in the broker).
	handshake(c, 1, "PLAIN")
}

// TestServerSASLPlainV0RawTokens: after SaslHandshake v0 the token travels
// as a bare size-prefixed frame and the answer likewise (KIP-152's old path).
func TestServerSASLPlainV0RawTokens(t *testing.T) {
	addr := startSASL(t, nil)
	c := dial(t, addr)
	if hs := handshake(c, 0, "PLAIN"); hs.ErrorCode != 0 {
		t.Fatalf("handshake v0: %+v", hs)
	}
	tok := "\x00alice\x00alice-pw"
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(tok)))
	if _, err := c.conn.Write(append(frame, tok...)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil || binary.BigEndian.Uint32(size[:]) != 0 {
		t.Fatalf("raw PLAIN answer: %v %v", size, err)
	}
	if p := principalOf(c); p != "User:alice" {
		t.Fatalf("principal %q", p)
	}
	// A wrong password on v0: no answer, the connection closes.
	c2 := dial(t, addr)
	handshake(c2, 0, "PLAIN")
	bad := "\x00alice\x00nope"
	c2.conn.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(bad))), bad...))
	c2.expectClosed()
}

// TestServerSASLFailures: Kafka's answers to each way an unauthenticated
// client can go wrong.
func TestServerSASLFailures(t *testing.T) {
	addr := startSASL(t, nil)

	// A request other than ApiVersions/SaslHandshake before authentication closes without an answer.
	c := dial(t, addr)
	c.send(metadataReq(1))
	c.expectClosed()

	// An unsupported mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled list, then closed.
	c = dial(t, addr)
	if hs := handshake(c, 1, "GSSAPI"); hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code || len(hs.SupportedMechanisms) != 2 {
		t.Fatalf("GSSAPI handshake: %+v", hs)
	}
	c.expectClosed()

	// SaslAuthenticate before SaslHandshake: closed.
	c = dial(t, addr)
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(1)
	c.send(req)
	c.expectClosed()

	// CVE-2017-12610: authzid other than the user, answered with Kafka's
	// message after connection.failed.authentication.delay.ms, then closed.
	c = dial(t, addr)
	handshake(c, 1, "PLAIN")
	start := time.Now()
	ar := authenticate(c, 1, "admin\x00alice\x00alice-pw")
	if ar.ErrorCode != kerr.SaslAuthenticationFailed.Code || ar.ErrorMessage == nil ||
		*ar.ErrorMessage != "Authentication failed: Client requested an authorization id that is different from username" {
		t.Fatalf("authzid mismatch: %+v", ar)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("failure answered after %v, before connection.failed.authentication.delay.ms", d)
	}
	c.expectClosed()

	// Wrong password.
	c = dial(t, addr)
	handshake(c, 1, "PLAIN")
	if ar := authenticate(c, 1, "\x00alice\x00nope"); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code ||
		*ar.ErrorMessage != "Authentication failed: Invalid username or password" {
		t.Fatalf("wrong password: %+v", ar)
	}
	c.expectClosed()
}

// TestServerSASLFrameLimit: before authentication a frame above
// sasl.server.max.receive.size closes the connection as soon as its size
// prefix is read (CVE-2022-34917), although socket.request.max.bytes allows it.
func TestServerSASLFrameLimit(t *testing.T) {
	addr := startSASL(t, func(c *sasl.Config) { c.MaxReceiveSize = 1024 })
	c := dial(t, addr)
	c.conn.Write(binary.BigEndian.AppendUint32(nil, 4096)) // MaxRequestSize is 1 MiB
	c.expectClosed()
	// Also in the raw v0 phase.
	c = dial(t, addr)
	handshake(c, 0, "PLAIN")
	c.conn.Write(binary.BigEndian.AppendUint32(nil, 2048))
	c.expectClosed()
	// A small frame still works.
	c = dial(t, addr)
	if hs := handshake(c, 1, "PLAIN"); hs.ErrorCode != 0 {
		t.Fatal(hs)
	}
}

// TestServerSASLReauthentication: KIP-368. SaslAuthenticate v1 carries the
// session lifetime; a re-authentication with the same principal is
// accepted; once the session has expired any other request closes the
// connection.
func TestServerSASLReauthentication(t *testing.T) {
	const lifetime = 300 * time.Millisecond
	addr := startSASL(t, func(c *sasl.Config) {
		c.ReauthAfter = lifetime
		c.PlainUsers["bob"] = "bob-pw"
	})
	c := dial(t, addr)
	handshake(c, 1, "PLAIN")
	ar := authenticate(c, 1, "\x00alice\x00alice-pw")
	authAt := time.Now()
	if ar.ErrorCode != 0 || ar.SessionLifetimeMillis != lifetime.Milliseconds() {
		t.Fatalf("authenticate: %+v", ar)
	}
	// Re-authenticate as alice: fine; the session is renewed.
	handshake(c, 1, "PLAIN")
	if ar := authenticate(c, 1, "\x00alice\x00alice-pw"); ar.ErrorCode != 0 {
		t.Fatalf("re-authentication: %+v", ar)
	}
	authAt = time.Now()
	if p := principalOf(c); p != "User:alice" {
		t.Fatalf("principal %q", p)
	}
	// Re-authenticating as someone else is refused.
	c2 := dial(t, addr)
	handshake(c2, 1, "PLAIN")
	authenticate(c2, 1, "\x00alice\x00alice-pw")
	handshake(c2, 1, "PLAIN")
	if ar := authenticate(c2, 1, "\x00bob\x00bob-pw"); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("principal change: %+v", ar)
	}
	c2.expectClosed()
	// Past the lifetime, a request that is not a re-authentication closes the connection.
	testwait.For(t, 10*time.Second, func() error {
		if time.Since(authAt) <= lifetime+20*time.Millisecond {
			return io.ErrNoProgress
		}
		return nil
	})
	c.send(metadataReq(1))
	c.expectClosed()
}

// TestServerPlaintextConnIsTCP: a plaintext listener's
// connection is a *net.TCPConn (the sendfile path); TLS wraps only TLS listeners.
func TestServerPlaintextConnIsTCP(t *testing.T) {
	h := &connHandler{testHandler: newTestHandler(), conns: make(chan net.Conn, 1)}
	_, addr, _ := startServer(t, h, nil)
	c := dial(t, addr)
	c.roundTrip(metadataReq(1))
	if _, ok := (<-h.conns).(*net.TCPConn); !ok {
		t.Fatal("a PLAINTEXT connection is not a *net.TCPConn: sendfile would be lost")
	}
}

type connHandler struct {
	*testHandler
	conns chan net.Conn
}

func (h *connHandler) Serve(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
	select {
	case h.conns <- c.NetConn():
	default:
	}
	return h.testHandler.Serve(ctx, c, req)
}
