package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
	"samsa/kafka"
)

var ctx = context.Background()

func begin(t *testing.T, c *Coordinator, id string, tps ...kafka.TopicPartition) InitResult {
	t.Helper()
	r := c.InitProducerID(ctx, id, 60000, -1, -1)
	if r.Code != 0 {
		t.Fatalf("init: %+v", r)
	}
	if code := c.AddPartitions(ctx, id, r.ProducerID, r.ProducerEpoch, tps); code != 0 {
		t.Fatalf("add: %d", code)
	}
	return r
}

// TestTxnCoordinatorCommitWritesMarkers: EndTxn answers after
// PrepareCommit, each partition gets a COMMIT marker with the coordinator
// epoch, then CompleteCommit; the next transaction may start.
func TestTxnCoordinatorCommitWritesMarkers(t *testing.T) {
	ls := &leaders{}
	c := testCoordinator(t, newStorageLog(t), ls, 7, nil)
	a0, b1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "b", Partition: 1}
	r := begin(t, c, "t1", a0, b1)
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("end: %d", code)
	}
	testwait.Until(t, 20*time.Second, "CompleteCommit", func() bool { return c.Describe("t1").State == CompleteCommit })
	ms := ls.markers()
	if len(ms) != 1 || !ms[0].Commit || ms[0].CoordinatorEpoch != 7 || ms[0].ProducerID != r.ProducerID ||
		ms[0].ProducerEpoch != r.ProducerEpoch || len(ms[0].Partitions) != 2 {
		t.Fatalf("markers %+v", ms)
	}
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("retried commit: %d", code)
	}
	if code := c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a0}); code != 0 {
		t.Fatalf("next transaction: %d", code)
	}
}

// TestTxnCoordinatorResumesOnLoad: markers fail while the first
// coordinator holds the partition (PrepareCommit stays), it resigns, and
// a new coordinator at a higher epoch loads the log, resends the markers
// with its own epoch and writes CompleteCommit (Kafka: a coordinator that
// fails mid-commit is finished by the next one).
func TestTxnCoordinatorResumesOnLoad(t *testing.T) {
	log := newStorageLog(t)
	down := &leaders{code: kerr.NotLeaderForPartition.Code}
	c1 := testCoordinator(t, log, down, 3, nil)
	r := begin(t, c1, "t1", kafka.TopicPartition{Topic: "a", Partition: 0})
	if code := c1.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("end: %d", code)
	}
	testwait.Until(t, 20*time.Second, "retries", func() bool { return len(down.markers()) >= 3 })
	if d := c1.Describe("t1"); d.State != PrepareCommit || len(d.Partitions) != 1 {
		t.Fatalf("while leaders refuse: %+v", d)
	}
	if code := c1.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{{Topic: "a", Partition: 1}}); code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("add while completing: %d", code)
	}
	c1.Resign(0, 3)
	if d := c1.Describe("t1"); d.Code != kerr.NotCoordinator.Code {
		t.Fatalf("after resign: %+v", d)
	}
	c1.Shutdown()

	up := &leaders{}
	c2 := testCoordinator(t, log, up, 4, nil)
	testwait.Until(t, 20*time.Second, "CompleteCommit on the new coordinator", func() bool { return c2.Describe("t1").State == CompleteCommit })
	ms := up.markers()
	if len(ms) == 0 || !ms[0].Commit || ms[0].CoordinatorEpoch != 4 {
		t.Fatalf("resumed markers %+v", ms)
	}
	// The reloaded state keeps the producer id and epoch.
	if d := c2.Describe("t1"); d.ProducerID != r.ProducerID || d.ProducerEpoch != r.ProducerEpoch {
		t.Fatalf("reloaded %+v, want pid %d epoch %d", d, r.ProducerID, r.ProducerEpoch)
	}
}

// TestTxnCoordinatorFencedMarkersStop: a leader answering
// INVALID_PRODUCER_EPOCH stops the marker loop; Complete* is not written.
func TestTxnCoordinatorFencedMarkersStop(t *testing.T) {
	ls := &leaders{code: kerr.InvalidProducerEpoch.Code}
	c := testCoordinator(t, newStorageLog(t), ls, 1, nil)
	r := begin(t, c, "t1", kafka.TopicPartition{Topic: "a", Partition: 0})
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, false); code != 0 {
		t.Fatalf("end: %d", code)
	}
	testwait.Until(t, 20*time.Second, "a marker", func() bool { return len(ls.markers()) == 1 })
	testwait.Until(t, 20*time.Second, "the loop to stop", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.mu.parts[0].txns["t1"].markerRunning
	})
	if d := c.Describe("t1"); d.State != PrepareAbort || len(ls.markers()) != 1 {
		t.Fatalf("after fenced marker: %+v, %d markers", d, len(ls.markers()))
	}
}

// TestTxnCoordinatorInitFencesOpenTxn: InitProducerId over an Ongoing
// transaction aborts it with epoch+1 and answers CONCURRENT_TRANSACTIONS;
// the retry bumps again; the old epoch is fenced.
func TestTxnCoordinatorInitFencesOpenTxn(t *testing.T) {
	ls := &leaders{}
	c := testCoordinator(t, newStorageLog(t), ls, 1, nil)
	r := begin(t, c, "t1", kafka.TopicPartition{Topic: "a", Partition: 0})
	if got := c.InitProducerID(ctx, "t1", 60000, -1, -1); got.Code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("init over an open txn: %+v", got)
	}
	testwait.Until(t, 20*time.Second, "CompleteAbort", func() bool { return c.Describe("t1").State == CompleteAbort })
	if ms := ls.markers(); len(ms) != 1 || ms[0].Commit || ms[0].ProducerEpoch != r.ProducerEpoch+1 {
		t.Fatalf("abort markers %+v", ms)
	}
	again := c.InitProducerID(ctx, "t1", 60000, -1, -1)
	if again.Code != 0 || again.ProducerID != r.ProducerID || again.ProducerEpoch != r.ProducerEpoch+2 {
		t.Fatalf("retried init: %+v", again)
	}
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != kerr.ProducerFenced.Code {
		t.Fatalf("zombie EndTxn: %d", code)
	}
}

// TestTxnCoordinatorExpiresIdleIDs: an id idle past
// transactional.id.expiration.ms gets a tombstone and is gone after a
// reload too.
func TestTxnCoordinatorExpiresIdleIDs(t *testing.T) {
	log := newStorageLog(t)
	c := testCoordinator(t, log, &leaders{}, 1, func(cfg *Config) {
		cfg.IDExpiration, cfg.RemoveInterval = 50*time.Millisecond, 20*time.Millisecond
	})
	if r := c.InitProducerID(ctx, "t1", 60000, -1, -1); r.Code != 0 {
		t.Fatalf("init: %+v", r)
	}
	testwait.Until(t, 20*time.Second, "expiry", func() bool { return c.Describe("t1").Code == kerr.TransactionalIDNotFound.Code })
	c.Shutdown()
	c2 := testCoordinator(t, log, &leaders{}, 2, nil)
	if d := c2.Describe("t1"); d.Code != kerr.TransactionalIDNotFound.Code {
		t.Fatalf("reloaded an expired id: %+v", d)
	}
}

// TestTxnCoordinatorVerify: the KIP-890 part 1 answer.
func TestTxnCoordinatorVerify(t *testing.T) {
	c := testCoordinator(t, newStorageLog(t), &leaders{}, 1, nil)
	a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
	r := begin(t, c, "t1", a0)
	res, code := c.Verify("t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a0, a1})
	if code != 0 || res[a0] != 0 || res[a1] != kerr.InvalidTxnState.Code {
		t.Fatalf("verify: %v %d", res, code)
	}
	if _, code := c.Verify("nope", 1, 0, []kafka.TopicPartition{a0}); code != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("unknown id: %d", code)
	}
}

// gatedLog holds every ReadFrom until gate is closed (a slow load).
type gatedLog struct {
	*storageLog
	gate chan struct{}
}

func (g gatedLog) ReadFrom(p int32, off int64, maxBytes int) (ReadResult, error) {
	<-g.gate
	return g.storageLog.ReadFrom(p, off, maxBytes)
}

// TestTxnCoordinatorLoadInProgress: while a partition loads, its ids get
// COORDINATOR_LOAD_IN_PROGRESS; ids of partitions not led here
// NOT_COORDINATOR; after the load the state is there.
func TestTxnCoordinatorLoadInProgress(t *testing.T) {
	log := newStorageLog(t)
	c1 := testCoordinator(t, log, &leaders{}, 1, nil)
	r := begin(t, c1, "t1", kafka.TopicPartition{Topic: "a", Partition: 0})
	c1.Shutdown()

	g := gatedLog{storageLog: log, gate: make(chan struct{})}
	cfg := DefaultConfig()
	cfg.NumPartitions = 2
	c := NewCoordinator(Options{Config: cfg, Log: g, Markers: &leaders{},
		NewProducerID: func() (int64, error) { return 5000, nil },
		PartitionFor: func(id string, _ int32) int32 {
			if id == "t1" {
				return 0
			}
			return 1
		}})
	defer c.Shutdown()
	c.BecomeLeader(0, 2)
	if d := c.Describe("t1"); d.Code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("while loading: %+v", d)
	}
	if got := c.InitProducerID(ctx, "t1", 60000, -1, -1); got.Code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("init while loading: %+v", got)
	}
	if _, code := c.List(nil, nil); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("list while loading: %d", code)
	}
	if d := c.Describe("other"); d.Code != kerr.NotCoordinator.Code {
		t.Fatalf("partition not led: %+v", d)
	}
	close(g.gate)
	testwait.Until(t, 20*time.Second, "the load", func() bool { return c.Describe("t1").Code == 0 })
	if d := c.Describe("t1"); d.State != Ongoing || d.ProducerID != r.ProducerID || len(d.Partitions) != 1 {
		t.Fatalf("loaded %+v", d)
	}
}
