package netns

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Subnet is the harness's /24; RootIP is the clients' address in it.
const (
	Subnet = "10.77.0.0/24"
	RootIP = "10.77.0.254"
)

// Net is a built network. Methods are safe for concurrent use.
type Net struct {
	prefix string
	nodes  map[string]string // node name -> IP

	mu    sync.Mutex
	rules map[string]bool // nodes with iptables rules (for heal)
	slow  map[string]bool // nodes with a tbf qdisc
}

// run runs a command with a deadline and returns its combined output in
// the error.
func run(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("netns: %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// Available reports whether namespaces, veth pairs and iptables inside a
// namespace work here (root, iproute2, iptables), trying them under the
// prefix and removing what it made.
func Available(prefix string) error {
	ns := prefix + "-probe"
	_ = run("ip", "netns", "del", ns)
	if err := run("ip", "netns", "add", ns); err != nil {
		return err
	}
	defer run("ip", "netns", "del", ns)
	if err := run("ip", "-n", ns, "link", "add", "pa", "type", "veth", "peer", "name", "pb"); err != nil {
		return err
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		return fmt.Errorf("netns: iptables not installed (apt-get install iptables)")
	}
	return run("ip", "netns", "exec", ns, "iptables", "-A", "INPUT", "-s", "10.77.0.1", "-j", "DROP")
}

// Setup builds the network for nodes (name -> last octet of the address,
// 1..253). It removes leftovers with the same prefix first.
func Setup(prefix string, nodes map[string]int) (*Net, error) {
	Cleanup(prefix)
	n := &Net{prefix: prefix, nodes: map[string]string{}, rules: map[string]bool{}, slow: map[string]bool{}}
	sw := prefix + "-sw"
	steps := [][]string{
		{"ip", "netns", "add", sw},
		{"ip", "-n", sw, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", sw, "link", "set", "br0", "up"},
		{"ip", "-n", sw, "link", "set", "lo", "up"},
		{"ip", "link", "add", n.rootLink(), "type", "veth", "peer", "name", "p-root", "netns", sw},
		{"ip", "-n", sw, "link", "set", "p-root", "master", "br0", "up"},
		{"ip", "addr", "add", RootIP + "/24", "dev", n.rootLink()},
		{"ip", "link", "set", n.rootLink(), "up"},
	}
	for name, octet := range nodes {
		if octet < 1 || octet > 253 || len("p-"+name) > 15 {
			return nil, fmt.Errorf("netns: bad node %q/%d", name, octet)
		}
		ip := "10.77.0." + strconv.Itoa(octet)
		n.nodes[name] = ip
		ns := n.NS(name)
		steps = append(steps,
			[]string{"ip", "netns", "add", ns},
			[]string{"ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", "p-" + name, "netns", sw},
			[]string{"ip", "-n", sw, "link", "set", "p-" + name, "master", "br0", "up"},
			[]string{"ip", "-n", ns, "addr", "add", ip + "/24", "dev", "eth0"},
			[]string{"ip", "-n", ns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			Cleanup(prefix)
			return nil, err
		}
	}
	return n, nil
}

func (n *Net) rootLink() string { return n.prefix + "0" }

// NS is the namespace of node.
func (n *Net) NS(node string) string { return n.prefix + "-" + node }

// IP is node's address.
func (n *Net) IP(node string) string { return n.nodes[node] }

// Command returns cmd args run inside node's namespace (`ip netns exec`,
// which execs the program: the process's pid is the program's).
func (n *Net) Command(node string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.NS(node)}, args...)...)
}

func (n *Net) addRule(node string, spec ...string) error {
	if err := run(append([]string{"ip", "netns", "exec", n.NS(node), "iptables", "-A"}, spec...)...); err != nil {
		return err
	}
	n.mu.Lock()
	n.rules[node] = true
	n.mu.Unlock()
	return nil
}

// Cut drops all traffic between a and b, both ways.
func (n *Net) Cut(a, b string) error {
	if err := n.addRule(a, "INPUT", "-s", n.IP(b), "-j", "DROP"); err != nil {
		return err
	}
	return n.addRule(b, "INPUT", "-s", n.IP(a), "-j", "DROP")
}

// Loss makes to drop the fraction p of the packets it receives from from.
func (n *Net) Loss(from, to string, p float64) error {
	return n.addRule(to, "INPUT", "-s", n.IP(from), "-m", "statistic", "--mode", "random",
		"--probability", strconv.FormatFloat(p, 'f', 3, 64), "-j", "DROP")
}

// Slow limits node's egress to rate (tc syntax, e.g. "256kbit").
func (n *Net) Slow(node, rate string) error {
	if err := run("ip", "netns", "exec", n.NS(node), "tc", "qdisc", "replace", "dev", "eth0", "root",
		"tbf", "rate", rate, "burst", "16kbit", "latency", "500ms"); err != nil {
		return err
	}
	n.mu.Lock()
	n.slow[node] = true
	n.mu.Unlock()
	return nil
}

// HealAll removes every rule and qdisc the Net added. It tries them all and
// returns the first error.
func (n *Net) HealAll() error {
	n.mu.Lock()
	rules, slow := n.rules, n.slow
	n.rules, n.slow = map[string]bool{}, map[string]bool{}
	n.mu.Unlock()
	var first error
	for node := range rules {
		// Flush rather than delete rule by rule: the chain holds only ours.
		if err := run("ip", "netns", "exec", n.NS(node), "iptables", "-F", "INPUT"); err != nil && first == nil {
			first = err
		}
	}
	for node := range slow {
		if err := run("ip", "netns", "exec", n.NS(node), "tc", "qdisc", "del", "dev", "eth0", "root"); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close removes the network.
func (n *Net) Close() { Cleanup(n.prefix) }

// Cleanup removes every namespace named prefix-* and the root link prefix0.
// Errors are ignored: it removes what is there.
func Cleanup(prefix string) []string {
	var removed []string
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], prefix+"-") {
			if run("ip", "netns", "del", f[0]) == nil {
				removed = append(removed, "netns "+f[0])
			}
		}
	}
	if run("ip", "link", "del", prefix+"0") == nil {
		removed = append(removed, "link "+prefix+"0")
	}
	return removed
}
