package zkutil

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// credSniffer wraps each connection go-zookeeper dials and reads the session
// id and password out of the server's ConnectResponse (the first frame on the
// connection). go-zookeeper keeps the password private; tests need it to
// expire a session the standard way (attach a second client to the session
// and close it).
type credSniffer struct {
	mu struct {
		sync.Mutex
		sessionID int64  // guarded by mu
		password  []byte // guarded by mu
	}
}

func (s *credSniffer) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &sniffConn{Conn: conn, s: s}, nil
}

func (s *credSniffer) credentials() (int64, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.sessionID, append([]byte(nil), s.mu.password...)
}

func (s *credSniffer) set(id int64, pw []byte) {
	s.mu.Lock()
	s.mu.sessionID, s.mu.password = id, pw
	s.mu.Unlock()
}

// sniffConn buffers the first frame it reads and parses it once complete.
// Reads happen on one goroutine at a time (go-zookeeper's authenticate, then
// its receive loop), so head needs no lock.
type sniffConn struct {
	net.Conn
	s    *credSniffer
	head []byte // bytes of the first frame seen so far; nil after parsing
	done bool
}

// maxConnectResponse bounds the bytes kept while waiting for the first frame.
const maxConnectResponse = 256

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.head = append(c.head, p[:n]...)
		c.parse()
	}
	return n, err
}

// parse decodes len(4) protocolVersion(4) timeout(4) sessionID(8)
// passwordLen(4) password.
func (c *sniffConn) parse() {
	if len(c.head) < 4 {
		return
	}
	frame := int(binary.BigEndian.Uint32(c.head))
	if frame < 20 || frame > maxConnectResponse {
		c.done, c.head = true, nil
		return
	}
	if len(c.head) < 4+frame {
		return
	}
	b := c.head[4 : 4+frame]
	id := int64(binary.BigEndian.Uint64(b[8:16]))
	pwLen := int(int32(binary.BigEndian.Uint32(b[16:20])))
	if pwLen >= 0 && 20+pwLen <= len(b) && id != 0 {
		c.s.set(id, append([]byte(nil), b[20:20+pwLen]...))
	}
	c.done, c.head = true, nil
}
