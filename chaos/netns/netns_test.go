package netns

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCutAndHeal builds a two-node network and checks that Cut stops TCP
// between the nodes (both ways) while the root namespace still reaches
// both, and that HealAll restores it. It needs root and changes the
// host's namespaces, so it runs only with SAMSA_CHAOS_NETNS=1 and never
// beside a chaos run (they share the subnet).
func TestCutAndHeal(t *testing.T) {
	if os.Getenv("SAMSA_CHAOS_NETNS") != "1" {
		t.Skip("set SAMSA_CHAOS_NETNS=1 (root; not while a chaos run is active)")
	}
	const prefix = "samsa-chaos-nt"
	n, err := Setup(prefix, map[string]int{"a": 1, "b": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	// A listener in b; a connects to it.
	l := n.Command("b", "python3", "-c", "import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('10.77.0.2',7000))\ns.listen(50)\nwhile True:\n  c,_=s.accept(); c.close()")
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Process.Kill(); _ = l.Wait() }()
	dial := func(from string) bool {
		cmd := n.Command(from, "python3", "-c", "import socket\ns=socket.create_connection(('10.77.0.2',7000),timeout=1)")
		return cmd.Run() == nil
	}
	rootDial := func() bool {
		return exec.Command("python3", "-c", "import socket\nsocket.create_connection(('10.77.0.2',7000),timeout=1)").Run() == nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for !dial("a") {
		if time.Now().After(deadline) {
			t.Fatal("a cannot reach b before any fault")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := n.Cut("a", "b"); err != nil {
		t.Fatal(err)
	}
	if dial("a") {
		t.Fatal("a reaches b across a cut")
	}
	if !rootDial() {
		t.Fatal("the root namespace (clients) must still reach b")
	}
	if err := n.HealAll(); err != nil {
		t.Fatal(err)
	}
	if !dial("a") {
		t.Fatal("a cannot reach b after HealAll")
	}
	n.Close()
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), prefix) {
		t.Fatalf("namespaces left after Close: %s", out)
	}
}
