package brokertest

// Per-broker properties of a ProcCluster: fault tests route one broker's
// ZooKeeper session or inter-broker listener through a proxy by rewriting
// its server.properties while it is stopped.

import (
	"fmt"
	"os"
	"strings"
)

// SetProperties overrides keys of broker i's server.properties (an empty
// value removes the key). The process reads the file at its next Start;
// call it while broker i is stopped or killed.
func (c *ProcCluster) SetProperties(i int, kv map[string]string) {
	c.t.Helper()
	if c.Running(i) {
		c.t.Fatalf("brokertest: SetProperties on running broker %d", c.procs[i].ID)
	}
	p := c.procs[i]
	b, err := os.ReadFile(p.props)
	if err != nil {
		c.t.Fatalf("brokertest: %v", err)
	}
	props := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok {
			props[k] = v
		}
	}
	for k, v := range kv {
		if v == "" {
			delete(props, k)
			continue
		}
		props[k] = v
	}
	if err := os.WriteFile(p.props, []byte(renderProperties(props)), 0o644); err != nil {
		c.t.Fatalf("brokertest: %v", err)
	}
}

// Property returns broker i's current value of key in its
// server.properties ("" when unset).
func (c *ProcCluster) Property(i int, key string) string {
	c.t.Helper()
	b, err := os.ReadFile(c.procs[i].props)
	if err != nil {
		c.t.Fatalf("brokertest: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// ZKThrough restarts broker i (SIGTERM, then start) with its ZooKeeper
// connection going to proxyAddr (host:port) instead of the server, on
// the same chroot, so that a proxy can cut this broker alone from
// ZooKeeper.
func (c *ProcCluster) ZKThrough(i int, proxyAddr string) {
	c.t.Helper()
	slash := strings.IndexByte(c.connect, '/')
	if slash < 0 {
		c.t.Fatalf("brokertest: zookeeper.connect %q has no chroot", c.connect)
	}
	if c.Running(i) {
		c.Stop(i)
	}
	c.SetProperties(i, map[string]string{"zookeeper.connect": proxyAddr + c.connect[slash:]})
	c.Start(i)
}

// InterBrokerThrough restarts broker i (SIGTERM, then start) with a
// second listener INTERNAL on internalPort, used between brokers
// (inter.broker.listener.name) and advertised at advertisedAddr
// (host:port, typically a proxy forwarding to 127.0.0.1:internalPort).
// Clients keep using the PLAINTEXT listener at Addr(i).
func (c *ProcCluster) InterBrokerThrough(i, internalPort int, advertisedAddr string) {
	c.t.Helper()
	if c.Running(i) {
		c.Stop(i)
	}
	c.SetProperties(i, map[string]string{
		"listeners":                      fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,INTERNAL://127.0.0.1:%d", c.procs[i].Port, internalPort),
		"advertised.listeners":           fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,INTERNAL://%s", c.procs[i].Port, advertisedAddr),
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
		"inter.broker.listener.name":     "INTERNAL",
	})
	c.Start(i)
}

// FreePort returns a free TCP port on 127.0.0.1 (it may be taken again by
// the time it is used, which is unlikely).
func FreePort() (int, error) { return freeTCPPort() }
