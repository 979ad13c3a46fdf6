package brokertest

import (
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"samsa/internal/testwait"
)

// WaitFor is testwait.For (poll cond until it returns nil or timeout
// passes, then fail with its last error; STYLE S11.3), under the name the
// harness's users already call so that a cluster test needs one import.
func WaitFor(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	testwait.For(t, timeout, cond)
}

// samsaGoroutines returns the stacks of goroutines running Samsa broker
// code, keyed by their "goroutine N" header line without its state: the
// runtime never reuses a goroutine id, and the state and arguments of a
// goroutine that existed before a cluster started (another cluster's, in a
// test or benchmark that runs two) change while it runs, so a stack's text
// alone would count it as new.
func samsaGoroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		if len(buf) >= 64<<20 {
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !interesting(g) {
			continue
		}
		id, _, _ := strings.Cut(g, " [")
		out[id] = g
	}
	return out
}

// interesting reports whether a goroutine stack belongs to broker code
// that a closed cluster must have stopped.
func interesting(stack string) bool {
	if strings.Contains(stack, "brokertest.samsaGoroutines") || strings.Contains(stack, "testing.tRunner") ||
		strings.Contains(stack, "zktest.") {
		return false
	}
	for _, pkg := range []string{"samsa/broker", "samsa/controller", "samsa/zkutil.", "go-zookeeper/zk"} {
		if strings.Contains(stack, pkg) {
			return true
		}
	}
	return false
}

// checkGoroutines fails t if broker goroutines started during the test are
// still running after a grace period.
func checkGoroutines(t testing.TB, before map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var leaked []string
		for id, g := range samsaGoroutines() {
			if _, old := before[id]; !old {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(leaked)
			if len(leaked) > 5 {
				leaked = leaked[:5]
			}
			t.Errorf("brokertest: %d goroutines still running after the cluster closed, e.g.:\n%s",
				len(leaked), strings.Join(leaked, "\n\n"))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
