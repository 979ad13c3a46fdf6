package txn

import (
	"samsa/internal/testwait"
	"samsa/kafka"

	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// gatedLeaders is a MarkerWriter whose leaders answer NONE only once open
// is called: until then WriteMarkers blocks (markers slow to land).
type gatedLeaders struct {
	once sync.Once
	gate chan struct{}
}

func newGatedLeaders() *gatedLeaders { return &gatedLeaders{gate: make(chan struct{})} }

func (g *gatedLeaders) open() { g.once.Do(func() { close(g.gate) }) }

func (g *gatedLeaders) WriteMarkers(ctx context.Context, m Marker) map[kafka.TopicPartition]int16 {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil
	}
	out := map[kafka.TopicPartition]int16{}
	for _, tp := range m.Partitions {
		out[tp] = 0
	}
	return out
}

// TestTxnPendingWaitAddAfterCommit: the next transaction's
// AddPartitionsToTxn, arriving while the previous one's markers are still
// being written, waits for CompleteCommit and then succeeds, instead of
// answering CONCURRENT_TRANSACTIONS (the client's backoff).
func TestTxnPendingWaitAddAfterCommit(t *testing.T) {
	g := newGatedLeaders()
	t.Cleanup(g.open)
	c := testCoordinator(t, newStorageLog(t), g, 1, func(cfg *Config) { cfg.PendingWait = time.Minute })
	r := begin(t, c, "t1", kafka.TopicPartition{Topic: "a", Partition: 0})
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("end: %d", code)
	}
	got := make(chan int16, 1)
	go func() {
		got <- c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{{Topic: "a", Partition: 1}})
	}()
	testwait.Until(t, 20*time.Second, "the AddPartitions to wait", func() bool { return c.metrics.pendingWaits.n.Load() >= 1 })
	select {
	case code := <-got:
		t.Fatalf("AddPartitions answered %d before the markers landed", code)
	default:
	}
	if d := c.Describe("t1"); d.State != PrepareCommit {
		t.Fatalf("while the markers are held: %+v", d)
	}
	g.open()
	select {
	case code := <-got:
		if code != 0 {
			t.Fatalf("AddPartitions after CompleteCommit: %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("AddPartitions still waiting after the markers landed")
	}
	if d := c.Describe("t1"); d.State != Ongoing || len(d.Partitions) != 1 || d.Partitions[0] != (kafka.TopicPartition{Topic: "a", Partition: 1}) {
		t.Fatalf("next transaction: %+v", d)
	}
}

// TestTxnPendingWaitBounded: markers that do not land within PendingWait
// leave the answer CONCURRENT_TRANSACTIONS, as Kafka's; with PendingWait
// 0 it comes at once without waiting.
func TestTxnPendingWaitBounded(t *testing.T) {
	for _, wait := range []time.Duration{0, 50 * time.Millisecond} {
		g := newGatedLeaders()
		c := testCoordinator(t, newStorageLog(t), g, 1, func(cfg *Config) { cfg.PendingWait = wait })
		r := begin(t, c, "t1", kafka.TopicPartition{Topic: "a", Partition: 0})
		if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, false); code != 0 {
			t.Fatalf("end: %d", code)
		}
		if code := c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{{Topic: "a", Partition: 1}}); code != kerr.ConcurrentTransactions.Code {
			t.Fatalf("wait %v: AddPartitions while completing: %d", wait, code)
		}
		if got := c.InitProducerID(ctx, "t1", 60000, -1, -1); got.Code != kerr.ConcurrentTransactions.Code {
			t.Fatalf("wait %v: InitProducerId while completing: %+v", wait, got)
		}
		waits := c.metrics.pendingWaits.n.Load()
		if (wait == 0) != (waits == 0) {
			t.Fatalf("wait %v: %d waits", wait, waits)
		}
		g.open()
		testwait.Until(t, 20*time.Second, "CompleteAbort", func() bool { return c.Describe("t1").State == CompleteAbort })
		// A retried EndTxn of the completed abort is answered NONE.
		if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, false); code != 0 {
			t.Fatalf("wait %v: retried abort: %d", wait, code)
		}
	}
}

// heldLog is a Log whose replication waits block while held, counting
// the appends.
type heldLog struct {
	Log
	mu      sync.Mutex
	held    chan struct{} // non-nil: replication waits wait for it to close; guarded by mu
	appends int           // guarded by mu
	waiting int           // replication waits blocked now; guarded by mu
}

func (g *heldLog) hold() {
	g.mu.Lock()
	g.held = make(chan struct{})
	g.mu.Unlock()
}

func (g *heldLog) release() {
	g.mu.Lock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
	g.mu.Unlock()
}

func (g *heldLog) counts() (appends, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.appends, g.waiting
}

func (g *heldLog) Append(p int32, batch []byte) (int64, error) {
	g.mu.Lock()
	g.appends++
	g.mu.Unlock()
	return g.Log.Append(p, batch)
}

func (g *heldLog) WaitReplicated(ctx context.Context, p int32, next int64, timeout time.Duration) error {
	g.mu.Lock()
	h := g.held
	g.waiting++
	g.mu.Unlock()
	if h != nil {
		select {
		case <-h:
		case <-ctx.Done():
		}
	}
	g.mu.Lock()
	g.waiting--
	g.mu.Unlock()
	return g.Log.WaitReplicated(ctx, p, next, timeout)
}

// TestTxnPendingWaitChainsAdds: AddPartitionsToTxn requests of one
// producer arriving while another's record is in the local log but not
// replicated (franz-go sends one per partition leader) do not wait for
// that replication: each appends its record after it (chain.go), every
// record holding the partitions of those before, and all answer once
// replicated, with every partition added.
func TestTxnPendingWaitChainsAdds(t *testing.T) {
	g := &heldLog{Log: newStorageLog(t)}
	c := testCoordinator(t, g, &leaders{}, 1, func(cfg *Config) { cfg.PendingWait = time.Minute })
	r := c.InitProducerID(ctx, "t1", 60000, -1, -1)
	if r.Code != 0 {
		t.Fatalf("init: %+v", r)
	}
	base, _ := g.counts()
	g.hold()
	tps := []kafka.TopicPartition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}
	got := make(chan int16, len(tps))
	go func() { got <- c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, tps[:1]) }()
	testwait.Until(t, 20*time.Second, "the first append to wait for replication", func() bool { _, w := g.counts(); return w == 1 })
	for _, tp := range tps[1:] {
		go func() { got <- c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{tp}) }()
	}
	testwait.Until(t, 20*time.Second, "every partition appended while the first is unreplicated", func() bool {
		n, w := g.counts()
		c.mu.Lock()
		defer c.mu.Unlock()
		md := c.mu.parts[0].txns["t1"]
		return n-base == w && md.chain.base != nil && len(md.chain.base.partitions) == 3
	})
	select {
	case code := <-got:
		t.Fatalf("an AddPartitions answered %d before its record was replicated", code)
	default:
	}
	if codes, code := c.Verify("t1", r.ProducerID, r.ProducerEpoch, tps); code != 0 || codes[tps[0]] == 0 || codes[tps[2]] == 0 {
		t.Fatalf("Verify before replication: %v %d", codes, code)
	}
	g.release()
	for range tps {
		select {
		case code := <-got:
			if code != 0 {
				t.Fatalf("AddPartitions: %d", code)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("AddPartitions did not answer")
		}
	}
	if n, _ := g.counts(); n-base < 2 || n-base > 3 {
		t.Fatalf("%d appends for three AddPartitions, want 2 or 3", n-base)
	}
	if d := c.Describe("t1"); d.State != Ongoing || len(d.Partitions) != 3 {
		t.Fatalf("after the adds: %+v", d)
	}
}

// TestTxnMarkersUnknownDestination: partitions whose leader is unknown
// (LEADER_NOT_AVAILABLE from the marker writer) are retried, never taken
// as done, and counted in Kafka's UnknownDestinationQueueSize until a
// leader has their marker.
func TestTxnMarkersUnknownDestination(t *testing.T) {
	ls := &leaders{code: kerr.LeaderNotAvailable.Code}
	c := testCoordinator(t, newStorageLog(t), ls, 1, nil)
	r := begin(t, c, "t1", kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1})
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("end: %d", code)
	}
	testwait.Until(t, 20*time.Second, "two partitions without a destination", func() bool {
		return len(ls.markers()) >= 2 && c.Stats().UnknownDestinationQueueSize == 2
	})
	if d := c.Describe("t1"); d.State != PrepareCommit || len(d.Partitions) != 2 {
		t.Fatalf("while no leader: %+v", d)
	}
	ls.setCode(0)
	testwait.Until(t, 20*time.Second, "CompleteCommit", func() bool { return c.Describe("t1").State == CompleteCommit })
	if s := c.Stats(); s.UnknownDestinationQueueSize != 0 || s.LogAppendRetryQueueSize != 0 {
		t.Fatalf("after completion: %+v", s)
	}
}
