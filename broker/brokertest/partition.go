package brokertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// netFaults cuts inter-broker connections (controller requests, replica
// fetches) between chosen pairs of brokers. ZooKeeper sessions and client
// connections are not affected.
type netFaults struct {
	c  *Cluster
	mu sync.Mutex
	// blocked holds unordered pairs {i, j} with i < j; guarded by mu.
	blocked map[[2]int]bool
	// conns are the open inter-broker connections by (from, to); guarded by mu.
	conns map[[2]int]map[net.Conn]struct{}
}

func newNetFaults(c *Cluster) *netFaults {
	return &netFaults{c: c, blocked: map[[2]int]bool{}, conns: map[[2]int]map[net.Conn]struct{}{}}
}

func pair(i, j int) [2]int {
	if i > j {
		i, j = j, i
	}
	return [2]int{i, j}
}

// errPartitioned is what a dial across a partition returns.
var errPartitioned = errors.New("brokertest: brokers are partitioned")

// dialer returns broker from's Dial hook.
func (n *netFaults) dialer(from int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		to := n.indexOf(addr)
		n.mu.Lock()
		blocked := to >= 0 && n.blocked[pair(from, to)]
		n.mu.Unlock()
		if blocked {
			return nil, fmt.Errorf("%w: %d -> %d", errPartitioned, from, to)
		}
		d := net.Dialer{Timeout: 5 * time.Second}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil || to < 0 {
			return conn, err
		}
		key := [2]int{from, to}
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.blocked[pair(from, to)] {
			conn.Close()
			return nil, fmt.Errorf("%w: %d -> %d", errPartitioned, from, to)
		}
		if n.conns[key] == nil {
			n.conns[key] = map[net.Conn]struct{}{}
		}
		tc := &trackedConn{Conn: conn, n: n, key: key}
		n.conns[key][tc] = struct{}{}
		return tc, nil
	}
}

// indexOf maps a broker address to its index (-1: not a broker).
func (n *netFaults) indexOf(addr string) int {
	for i := 0; i < n.c.N(); i++ {
		if b := n.c.Broker(i); b != nil {
			if a := b.Addr("PLAINTEXT"); a != nil && a.String() == addr {
				return i
			}
		}
	}
	return -1
}

type trackedConn struct {
	net.Conn
	n    *netFaults
	key  [2]int
	once sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.n.mu.Lock()
		delete(t.n.conns[t.key], t)
		t.n.mu.Unlock()
	})
	return t.Conn.Close()
}

// Partition cuts the inter-broker connections between brokers i and j in
// both directions (open ones are closed, new ones refused) until Heal.
func (c *Cluster) Partition(i, j int) {
	n := c.net
	n.mu.Lock()
	n.blocked[pair(i, j)] = true
	var cut []net.Conn
	for _, key := range [][2]int{{i, j}, {j, i}} {
		for conn := range n.conns[key] {
			cut = append(cut, conn)
		}
	}
	n.mu.Unlock()
	for _, conn := range cut {
		conn.Close()
	}
}

// Heal ends the partition between brokers i and j.
func (c *Cluster) Heal(i, j int) {
	c.net.mu.Lock()
	defer c.net.mu.Unlock()
	delete(c.net.blocked, pair(i, j))
}
