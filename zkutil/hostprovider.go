package zkutil

import "sync"

// hostProvider picks the next ZooKeeper server for go-zookeeper. Unlike
// go-zookeeper's DNSHostProvider, which with a single server pauses a second
// before every reconnect, it first retries each server twice at once (a
// dropped connection, then the reconnect that learns of an expired session),
// and only then reports retryStart, on which go-zookeeper fails queued
// requests with ErrNoServer and sleeps a second before the next round. Host
// names are resolved by the dialer.
type hostProvider struct {
	mu struct {
		sync.Mutex
		servers  []string // guarded by mu; immutable after Init
		next     int      // guarded by mu; index of the next server to try
		attempts int      // guarded by mu; attempts since the last success
	}
}

// Init records the servers (already host:port, shuffled by go-zookeeper).
func (h *hostProvider) Init(servers []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.servers = append([]string(nil), servers...)
	return nil
}

// Len returns the number of servers.
func (h *hostProvider) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.mu.servers)
}

// Next returns the next server; retryStart is true once every server was
// tried twice without success, and then at the start of every round.
func (h *hostProvider) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.mu.servers)
	s := h.mu.servers[h.mu.next]
	h.mu.next = (h.mu.next + 1) % n
	h.mu.attempts++
	retryStart := h.mu.attempts > 2*n && (h.mu.attempts-1)%n == 0
	return s, retryStart
}

// Connected resets the attempt count after a session was established.
func (h *hostProvider) Connected() {
	h.mu.Lock()
	h.mu.attempts = 0
	h.mu.Unlock()
}
