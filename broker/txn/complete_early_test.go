package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// gatedRecorder is a MarkerWriter that records every marker once open
// is called and blocks until then (markers slow to land).
type gatedRecorder struct {
	gatedLeaders
	leaders
}

func (g *gatedRecorder) WriteMarkers(ctx context.Context, m Marker) map[kafka.TopicPartition]int16 {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil
	}
	return g.leaders.WriteMarkers(ctx, m)
}

// completeWindow runs a transaction on a0 up to the window this test file
// is about: its markers landed and CompleteCommit is appended but not
// replicated (the high watermark held), and the next transaction's
// AddPartitions (a1) has appended its Ongoing record and waits for its
// replication. It returns the producer, the log end before CompleteCommit
// and the channel the AddPartitions answers on.
func completeWindow(t *testing.T, c *Coordinator, sl *storageLog, g *gatedRecorder, a0, a1 kafka.TopicPartition) (InitResult, int64, <-chan int16) {
	t.Helper()
	r := begin(t, c, "t1", a0)
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("end: %d", code)
	}
	sl.holdHW()
	before := sl.end(t, 0)
	got := make(chan int16, 1)
	go func() { got <- c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a1}) }()
	g.open()
	testwait.Until(t, 20*time.Second, "CompleteCommit and the next Ongoing appended", func() bool { return sl.end(t, 0) == before+2 })
	return r, before, got
}

// TestTxnCompleteBeforeReplicated: the next transaction starts once
// CompleteCommit is appended, without waiting for its replication; its
// own AddPartitions answers only once its Ongoing record (and so the
// CompleteCommit before it) is replicated. Meanwhile readers and the
// KIP-890 check see only replicated state: DescribeTransactions and
// ListTransactions report PrepareCommit and the new partition is not in
// the transaction.
func TestTxnCompleteBeforeReplicated(t *testing.T) {
	sl := newStorageLog(t)
	g := &gatedRecorder{gatedLeaders: *newGatedLeaders()}
	t.Cleanup(g.open)
	c := testCoordinator(t, sl, g, 1, func(cfg *Config) { cfg.PendingWait = time.Minute })
	a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
	r, _, got := completeWindow(t, c, sl, g, a0, a1)
	select {
	case code := <-got:
		t.Fatalf("AddPartitions answered %d before its record was replicated", code)
	default:
	}
	if d := c.Describe("t1"); d.State != PrepareCommit || len(d.Partitions) != 0 {
		t.Fatalf("Describe in the window: %+v", d)
	}
	if ls, code := c.List(nil, nil); code != 0 || len(ls) != 1 || ls[0].State != PrepareCommit {
		t.Fatalf("List in the window: %v %d", ls, code)
	}
	if codes, code := c.Verify("t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a1}); code != 0 || codes[a1] != kerr.InvalidTxnState.Code {
		t.Fatalf("Verify of the unreplicated partition: %v %d", codes, code)
	}
	sl.releaseHW()
	select {
	case code := <-got:
		if code != 0 {
			t.Fatalf("AddPartitions once replicated: %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("AddPartitions still waiting after replication")
	}
	if d := c.Describe("t1"); d.State != Ongoing || len(d.Partitions) != 1 || d.Partitions[0] != a1 {
		t.Fatalf("next transaction: %+v", d)
	}
	if codes, code := c.Verify("t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a1}); code != 0 || codes[a1] != 0 {
		t.Fatalf("Verify once replicated: %v %d", codes, code)
	}
}

// TestTxnCompleteUnreplicatedDeposed: the coordinator's log leader is
// deposed in that window. Whether the new leader's log lacks both records
// (truncated) or has them, the coordinator elected next finishes the
// first transaction (its COMMIT markers again, at the new coordinator
// epoch), the waiting AddPartitions answers NOT_COORDINATOR, a partition
// it asked for is in the transaction only if its record survived, and the
// client's retry runs the next transaction to its commit: nothing lost,
// nothing left hanging.
func TestTxnCompleteUnreplicatedDeposed(t *testing.T) {
	for _, truncated := range []bool{true, false} {
		sl := newStorageLog(t)
		g := &gatedRecorder{gatedLeaders: *newGatedLeaders()}
		t.Cleanup(g.open)
		c := testCoordinator(t, sl, g, 1, func(cfg *Config) { cfg.PendingWait = time.Minute })
		a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
		r, before, got := completeWindow(t, c, sl, g, a0, a1)
		keep := before + 2
		if truncated {
			keep = before
		}
		c.Resign(0, 1)
		sl.depose(t, 0, keep)
		select {
		case code := <-got:
			if code != kerr.NotCoordinator.Code {
				t.Fatalf("truncated %v: AddPartitions of the deposed coordinator: %d", truncated, code)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("truncated %v: AddPartitions hangs after the deposition", truncated)
		}
		sl.releaseHW()
		c.BecomeLeader(0, 2)
		testwait.Until(t, 20*time.Second, "the reload", func() bool { owned, loading := c.Owned(0); return owned && !loading })
		want := Ongoing // the Ongoing record survived: the new coordinator has a1
		if truncated {
			want = CompleteCommit // PrepareCommit reloaded, its markers sent again, completed
			testwait.Until(t, 20*time.Second, "the first transaction to complete", func() bool { return c.Describe("t1").State == CompleteCommit })
			if codes, code := c.Verify("t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a1}); code != 0 || codes[a1] != kerr.InvalidTxnState.Code {
				t.Fatalf("Verify of a partition the new coordinator does not know: %v %d", codes, code)
			}
		}
		if d := c.Describe("t1"); d.State != want {
			t.Fatalf("truncated %v: after the reload: %+v", truncated, d)
		}
		commits := map[int32]bool{}
		for _, m := range g.markers() {
			if m.Commit && m.ProducerID == r.ProducerID && len(m.Partitions) == 1 && m.Partitions[0] == a0 {
				commits[m.CoordinatorEpoch] = true
			}
		}
		if !commits[1] || commits[2] != truncated {
			t.Fatalf("truncated %v: COMMIT markers of the first transaction by coordinator epoch: %v", truncated, commits)
		}
		if code := c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a1}); code != 0 {
			t.Fatalf("truncated %v: retried AddPartitions: %d", truncated, code)
		}
		if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
			t.Fatalf("truncated %v: second EndTxn: %d", truncated, code)
		}
		testwait.Until(t, 20*time.Second, "the second transaction to complete", func() bool {
			for _, m := range g.markers() {
				if m.Commit && m.CoordinatorEpoch == 2 && len(m.Partitions) == 1 && m.Partitions[0] == a1 {
					return c.Describe("t1").State == CompleteCommit
				}
			}
			return false
		})
	}
}
