package zktest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of the server for fault injection: it can
// drop every client connection (a connection loss that keeps the session) or
// refuse all traffic (a partition that, held longer than the session timeout,
// makes ZooKeeper expire the session).
type Proxy struct {
	// Addr is the proxy's 127.0.0.1 listen address.
	Addr string

	srv *Server
	ln  net.Listener
	wg  sync.WaitGroup
	mu  struct {
		sync.Mutex
		blocked bool                  // guarded by mu
		conns   map[net.Conn]struct{} // guarded by mu; both sides of every pair
	}
}

// Proxy starts a proxy to s; it is closed when the test ends.
func (s *Server) Proxy(tb testing.TB) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("zktest: proxy listen: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), srv: s, ln: ln}
	p.mu.conns = make(map[net.Conn]struct{})
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// Chroot is Server.Chroot with the proxy's address.
func (p *Proxy) Chroot(tb testing.TB) string {
	cs := p.srv.Chroot(tb)
	return p.Addr + cs[strings.IndexByte(cs, '/'):]
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		blocked := p.mu.blocked
		p.mu.Unlock()
		if blocked {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.srv.Addr)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.mu.conns[c], p.mu.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.mu.conns, dst)
	delete(p.mu.conns, src)
	p.mu.Unlock()
}

func (p *Proxy) closeConnsLocked() {
	for c := range p.mu.conns {
		c.Close()
	}
}

// DropConnections closes every proxied connection; clients reconnect at once.
func (p *Proxy) DropConnections() {
	p.mu.Lock()
	p.closeConnsLocked()
	p.mu.Unlock()
}

// Block drops every connection and refuses new ones until Unblock.
func (p *Proxy) Block() {
	p.mu.Lock()
	p.mu.blocked = true
	p.closeConnsLocked()
	p.mu.Unlock()
}

// Unblock lets connections through again.
func (p *Proxy) Unblock() {
	p.mu.Lock()
	p.mu.blocked = false
	p.mu.Unlock()
}

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.ln.Close()
	p.DropConnections()
	p.wg.Wait()
}
