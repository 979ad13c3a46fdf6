package brokertest

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// RawConn is a bare Kafka connection for protocol-level tests: requests go
// out at exactly the version set on them, answers are decoded with the
// same kmsg types, and nothing retries or negotiates.
type RawConn struct {
	t    testing.TB
	c    net.Conn
	corr int32
}

// DialRaw connects to addr; t.Cleanup closes the connection.
func DialRaw(t testing.TB, addr string) *RawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &RawConn{t: t, c: c}
}

// NewRawConn wraps a connection the caller dialled (for example from a
// chosen loopback address); the caller closes c.
func NewRawConn(t testing.TB, c net.Conn) *RawConn { return &RawConn{t: t, c: c} }

// Conn is the underlying connection, for tests that write or read frames
// by hand.
func (r *RawConn) Conn() net.Conn { return r.c }

// RoundTrip sends req at its version and decodes the answer.
func (r *RawConn) RoundTrip(req kmsg.Request) (kmsg.Response, error) {
	r.t.Helper()
	r.corr++
	id := "raw"
	if err := r.c.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := r.c.Write(wire.AppendRequest(nil, req, r.corr, &id)); err != nil {
		return nil, err
	}
	frame, err := wire.ReadFrame(r.c, 64<<20, nil)
	if err != nil {
		return nil, err
	}
	return wire.ParseResponse(frame, req, r.corr)
}

// Send writes raw bytes.
func (r *RawConn) Send(b []byte) error {
	_, err := r.c.Write(b)
	return err
}

// Closed reports whether the broker closed the connection (read EOF) within
// a few seconds.
func (r *RawConn) Closed() bool {
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := r.c.Read(b[:])
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
