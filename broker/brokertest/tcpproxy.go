package brokertest

import (
	"net"
	"sync"
	"testing"
)

// TCPProxy forwards connections from a 127.0.0.1 port to a target
// address, for network faults between processes: Blackhole stops moving
// bytes in both directions while keeping every connection open (packets
// dropped, as by an iptables DROP rule: peers notice only by their
// timeouts); Heal lets the held bytes through again.
type TCPProxy struct {
	// Addr is the proxy's listen address.
	Addr string

	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	blocked bool                  // guarded by mu
	closed  bool                  // guarded by mu
	conns   map[net.Conn]struct{} // guarded by mu; both sides of every pair
}

// NewTCPProxy listens on 127.0.0.1:0 and forwards to target; it is
// closed when the test ends.
func NewTCPProxy(tb testing.TB, target string) *TCPProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("brokertest: proxy listen: %v", err)
	}
	p := &TCPProxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

func (p *TCPProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies src to dst, holding each chunk while the proxy is
// blackholed.
func (p *TCPProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer func() {
		dst.Close()
		src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitOpen() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a closed connection
			return
		}
	}
}

// waitOpen waits while the proxy is blackholed; false once it is closed.
func (p *TCPProxy) waitOpen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.blocked && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

// Blackhole stops forwarding (connections stay open, bytes are held).
func (p *TCPProxy) Blackhole() {
	p.mu.Lock()
	p.blocked = true
	p.mu.Unlock()
}

// Heal forwards again, held bytes first.
func (p *TCPProxy) Heal() {
	p.mu.Lock()
	p.blocked = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Close stops the proxy, closes every connection and waits for its
// goroutines.
func (p *TCPProxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.cond.Broadcast()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}
