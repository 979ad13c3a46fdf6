package zktest

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"samsa/zkutil"
)

// ExpireSession forces the expiry of c's current session the standard way:
// it attaches a second connection to the same session (id and password) and
// closes the session from there. ZooKeeper deletes the session's ephemeral
// znodes at once; c learns of the expiry when it reconnects, opens a new
// session, re-arms its watches and runs its OnNewSession hooks. ExpireSession
// returns once c has a new session id (bounded wait).
func (s *Server) ExpireSession(tb testing.TB, c *zkutil.Client) {
	tb.Helper()
	old, pw := c.SessionCredentials()
	if old == 0 {
		tb.Fatalf("zktest: client has no session to expire")
	}
	if err := closeSession(s.Addr, old, pw); err != nil {
		tb.Fatalf("zktest: expiring session 0x%x: %v", old, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if id := c.SessionID(); id != 0 && id != old {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("zktest: client did not get a new session after expiring 0x%x", old)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ExpireSession expires c's session on the shared server.
func ExpireSession(tb testing.TB, c *zkutil.Client) {
	tb.Helper()
	Start(tb).ExpireSession(tb, c)
}

// closeSession speaks just enough of the ZooKeeper protocol: ConnectRequest
// with the session's credentials, then a closeSession request (opcode -11).
func closeSession(addr string, sessionID int64, password []byte) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))

	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd.
	body := make([]byte, 0, 64)
	body = binary.BigEndian.AppendUint32(body, 0)
	body = binary.BigEndian.AppendUint64(body, 0)
	body = binary.BigEndian.AppendUint32(body, 30000)
	body = binary.BigEndian.AppendUint64(body, uint64(sessionID))
	body = binary.BigEndian.AppendUint32(body, uint32(len(password)))
	body = append(body, password...)
	if err := writeFrame(conn, body); err != nil {
		return err
	}
	resp, err := readFrame(conn)
	if err != nil {
		return fmt.Errorf("connect response: %w", err)
	}
	if len(resp) < 16 {
		return fmt.Errorf("short connect response (%d bytes)", len(resp))
	}
	if got := int64(binary.BigEndian.Uint64(resp[8:16])); got == 0 {
		return nil // already expired
	}
	// RequestHeader{xid=1, type=closeSession(-11)}.
	req := binary.BigEndian.AppendUint32(nil, 1)
	req = binary.BigEndian.AppendUint32(req, uint32(0xFFFFFFF5))
	if err := writeFrame(conn, req); err != nil {
		return err
	}
	if _, err := readFrame(conn); err != nil && err != io.EOF {
		return fmt.Errorf("close response: %w", err)
	}
	return nil
}

func writeFrame(w io.Writer, body []byte) error {
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	_, err := w.Write(append(frame, body...))
	return err
}

func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > 1<<16 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	buf := make([]byte, n)
	_, err := io.ReadFull(r, buf)
	return buf, err
}
