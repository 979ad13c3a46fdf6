package peer

import (
	"sync"
)

// Pool keeps one Client per remote broker id, for the controller's channel manager and the
// replica fetchers. Clients connect lazily and reconnect with backoff on their own. All methods
// are safe for concurrent use.
type Pool struct {
	clientID string   // immutable
	opts     []Option // immutable
	mu       struct {
		sync.Mutex
		clients map[int32]*Client // guarded by mu
		closed  bool              // guarded by mu
	}
}

// NewPool returns an empty Pool whose clients use clientID and opts.
func NewPool(clientID string, opts ...Option) *Pool {
	p := &Pool{clientID: clientID, opts: opts}
	p.mu.clients = make(map[int32]*Client)
	return p
}

// Get returns the Client for brokerID at addr. If the broker's address changed (it
// re-registered elsewhere), the old Client is closed and replaced. Get does not connect.
// After Close, Get returns ErrClosed.
func (p *Pool) Get(brokerID int32, addr string) (*Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return nil, ErrClosed
	}
	if c, ok := p.mu.clients[brokerID]; ok {
		if c.Addr() == addr {
			return c, nil
		}
		c.Close()
	}
	c := New(addr, p.clientID, p.opts...)
	p.mu.clients[brokerID] = c
	return c, nil
}

// Remove closes and forgets brokerID's Client (the broker left the cluster).
func (p *Pool) Remove(brokerID int32) {
	p.mu.Lock()
	c, ok := p.mu.clients[brokerID]
	delete(p.mu.clients, brokerID)
	p.mu.Unlock()
	if ok {
		c.Close()
	}
}

// Close closes every Client; later Gets return ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	clients := p.mu.clients
	p.mu.clients = nil
	p.mu.closed = true
	p.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
	return nil
}
