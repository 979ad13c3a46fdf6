package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// TestTxnChainedAddsDeposed: two AddPartitions chained (the second's
// record appended after the first's, neither replicated) when the log's
// leader is deposed and the new leader has only the first record. Both
// requests answer NOT_COORDINATOR; the reloaded coordinator knows the
// first partition only, so the KIP-890 check refuses a produce to the
// second (no transaction the coordinator cannot end), and the client's
// retry adds both and commits them.
func TestTxnChainedAddsDeposed(t *testing.T) {
	sl := newStorageLog(t)
	ls := &leaders{}
	c := testCoordinator(t, sl, ls, 1, func(cfg *Config) { cfg.PendingWait = time.Minute })
	r := c.InitProducerID(ctx, "t1", 60000, -1, -1)
	if r.Code != 0 {
		t.Fatalf("init: %+v", r)
	}
	a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
	sl.holdHW()
	before := sl.end(t, 0)
	got := make(chan int16, 2)
	add := func(tp kafka.TopicPartition) {
		go func() { got <- c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{tp}) }()
	}
	add(a0)
	testwait.Until(t, 20*time.Second, "the first record appended", func() bool { return sl.end(t, 0) == before+1 })
	add(a1)
	testwait.Until(t, 20*time.Second, "the chained record appended", func() bool { return sl.end(t, 0) == before+2 })
	c.Resign(0, 1)
	sl.depose(t, 0, before+1)
	for range 2 {
		select {
		case code := <-got:
			if code != kerr.NotCoordinator.Code {
				t.Fatalf("AddPartitions of the deposed coordinator: %d", code)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("AddPartitions hangs after the deposition")
		}
	}
	sl.releaseHW()
	c.BecomeLeader(0, 2)
	testwait.Until(t, 20*time.Second, "the reload", func() bool { owned, loading := c.Owned(0); return owned && !loading })
	codes, code := c.Verify("t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a0, a1})
	if code != 0 || codes[a0] != 0 || codes[a1] != kerr.InvalidTxnState.Code {
		t.Fatalf("Verify after the reload: %v %d", codes, code)
	}
	if code := c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a0, a1}); code != 0 {
		t.Fatalf("retried AddPartitions: %d", code)
	}
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("EndTxn: %d", code)
	}
	testwait.Until(t, 20*time.Second, "the commit", func() bool { return c.Describe("t1").State == CompleteCommit })
	ms := ls.markers()
	if len(ms) == 0 || len(ms[len(ms)-1].Partitions) != 2 || ms[len(ms)-1].CoordinatorEpoch != 2 {
		t.Fatalf("markers: %+v", ms)
	}
}
