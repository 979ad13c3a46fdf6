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
	// The client reconnects (and so moves its session back) as soon as the
	// server drops its connection, so the close can lose that race: retry.
	var lastErr error
	for attempt := 0; attempt < 10; attempt++ {
		lastErr = closeSession(s.Addr, old, pw)
		if lastErr != nil {
			continue
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if id := c.SessionID(); id != 0 && id != old {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		lastErr = fmt.Errorf("client still on session 0x%x", old)
	}
	tb.Fatalf("zktest: expiring session 0x%x: %v", old, lastErr)
}

// ExpireSession expires c's session on the shared server.
func ExpireSession(tb testing.TB, c *zkutil.Client) {
	tb.Helper()
	Start(tb).ExpireSession(tb, c)
}

// closeSession speaks just enough of the ZooKeeper protocol: a
// ConnectRequest with the session's credentials and, in the same write so the
// server handles it before the evicted client can reconnect, a closeSession
// request (opcode -11).
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
	// RequestHeader{xid=1, type=closeSession(-11)}.
	req := binary.BigEndian.AppendUint32(nil, 1)
	req = binary.BigEndian.AppendUint32(req, uint32(0xFFFFFFF5))
	if _, err := conn.Write(append(frame(body), frame(req)...)); err != nil {
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
		if sessionID == 0 {
			return fmt.Errorf("server gave no session")
		}
		return nil // already expired
	}
	// Without the close response the session moved back to its client
	// before the close was handled: the caller retries.
	resp, err = readFrame(conn)
	if err != nil {
		return fmt.Errorf("close response: %w", err)
	}
	if len(resp) < 16 || binary.BigEndian.Uint32(resp[12:16]) != 0 {
		return fmt.Errorf("close refused: % x", resp)
	}
	return nil
}

// canOpenSession reports whether the server hands out a session: it opens
// one with a raw ConnectRequest and closes it again. ZooKeeper answers
// "imok" a little before it accepts sessions.
func canOpenSession(addr string) bool {
	err := closeSession(addr, 0, make([]byte, 16))
	return err == nil
}

func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
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
