package zkconsumer

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"samsa/internal/testwait"
)

// goroutines counts the goroutines whose stack mentions any of marks,
// ignoring test goroutines.
func goroutines(marks ...string) (int, string) {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	n := 0
	var hits []string
	for _, g := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(g, "testing.tRunner") || strings.Contains(g, "testing.(*T).Run") {
			continue
		}
		for _, m := range marks {
			if strings.Contains(g, m) {
				n++
				hits = append(hits, g)
				break
			}
		}
	}
	return n, strings.Join(hits, "\n\n")
}

// TestZKConsumerCloseLeavesNoGoroutines: after Close, none of the
// connector's goroutines (run loop, fetchers, Sarama client creation) nor
// those of its Sarama client and ZooKeeper session remain.
func TestZKConsumerCloseLeavesNoGoroutines(t *testing.T) {
	e := newE2E(t, 1, "leak", 2)
	e.produce(t, 0, 20)
	marks := []string{"samsa/tools/zkconsumer.", "IBM/sarama", "go-zookeeper", "samsa/zkutil."}
	before, _ := goroutines(marks...)
	c := newConnector(t, e.config("g", "c"))
	for _, s := range startStatic(t, c, map[string]int{"leak": 2})["leak"] {
		consumeN(t, s, 1)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 10*time.Second, func() error {
		if n, stacks := goroutines(marks...); n > before {
			return fmt.Errorf("%d goroutines, %d before:\n%s", n, before, stacks)
		}
		return nil
	})
}
