package txn

import (
	"sync"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// TestTxnMarkerLoopEndRace: the id's next transaction reaches
// PrepareCommit after the previous one's CompleteCommit was applied but
// before that marker loop ended (so its EndTxn found a loop still
// running and started none). The ending loop starts the next one: the
// second transaction gets its markers and completes instead of staying
// in PrepareCommit (the producer's next AddPartitionsToTxn would get
// CONCURRENT_TRANSACTIONS for ever).
func TestTxnMarkerLoopEndRace(t *testing.T) {
	ls := &leaders{}
	c := testCoordinator(t, newStorageLog(t), ls, 1, func(cfg *Config) { cfg.PendingWait = time.Minute })
	ended, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := func() {
		once.Do(func() {
			close(ended)
			<-release
		})
	}
	c.loopEndHook.Store(&hook)
	a0, a1 := kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.TopicPartition{Topic: "a", Partition: 1}
	r := begin(t, c, "t1", a0)
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("end: %d", code)
	}
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the first transaction's marker loop did not complete")
	}
	if code := c.AddPartitions(ctx, "t1", r.ProducerID, r.ProducerEpoch, []kafka.TopicPartition{a1}); code != 0 {
		t.Fatalf("next add: %d", code)
	}
	if code := c.EndTxn(ctx, "t1", r.ProducerID, r.ProducerEpoch, true); code != 0 {
		t.Fatalf("next end: %d", code)
	}
	close(release)
	testwait.Until(t, 20*time.Second, "the second transaction to complete", func() bool {
		for _, m := range ls.markers() {
			if m.Commit && len(m.Partitions) == 1 && m.Partitions[0] == a1 {
				return c.Describe("t1").State == CompleteCommit
			}
		}
		return false
	})
}
