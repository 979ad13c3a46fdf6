package controller

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"samsa/internal/testwait"
)

// controllerGoroutines returns the stacks of goroutines running controller code.
func controllerGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "samsa/controller.(*Controller).run(") || strings.Contains(g, "samsa/controller.(*ChannelManager).runSender(") {
			out = append(out, g)
		}
	}
	return out
}

// TestControllerShutdownStopsGoroutines: Shutdown leaves no event or sender goroutine behind
// (STYLE S6.8). Not parallel, so no other test's controller runs meanwhile.
func TestControllerShutdownStopsGoroutines(t *testing.T) {
	if n := len(controllerGoroutines()); n != 0 {
		t.Skipf("%d controller goroutines from earlier tests", n)
	}
	cl := newCluster(t)
	n1 := cl.startNode(1, nil)
	n2 := cl.startNode(2, nil)
	waitActive(t, n1, n2)
	zc := cl.zk()
	createTopic(t, zc, "g", map[int32][]int32{0: {1, 2}})
	wantState(t, zc, "g", 0, 1, []int32{1, 2}, 0)
	if len(controllerGoroutines()) < 4 {
		t.Fatalf("expected 2 event loops and 2 senders, got %d goroutines", len(controllerGoroutines()))
	}
	n1.c.Shutdown()
	n2.c.Shutdown()
	n1.c.Shutdown() // idempotent
	testwait.For(t, waitTimeout, func() error {
		if g := controllerGoroutines(); len(g) != 0 {
			return fmt.Errorf("%d goroutines left, first:\n%s", len(g), g[0])
		}
		return nil
	})
}
