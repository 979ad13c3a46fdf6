package group

import (
	"context"
	"fmt"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// txnCommitAsync sends one TxnOffsetCommit of producer pid (epoch 0) for
// group: offset off on topic "in", partition part.
func txnCommitAsync(e *env, group string, pid int64, part int32, off int64) <-chan []int16 {
	ch := make(chan []int16, 1)
	go func() {
		ch <- e.c.CommitTxnOffsets(context.Background(), TxnCommitRequest{Group: group, TransactionalID: "t1",
			ProducerID: pid, ProducerEpoch: 0, Generation: -1,
			Offsets: []CommitOffset{{TopicPartition: kafka.TopicPartition{Topic: "in", Partition: part}, Offset: off, LeaderEpoch: -1}}})
	}()
	return ch
}

// committedIn returns group's committed offsets of "in" 0 and 1.
func committedIn(t *testing.T, e *env, group string) [2]int64 {
	t.Helper()
	code, offs := e.c.FetchOffsets(context.Background(), group, []kafka.TopicPartition{{Topic: "in", Partition: 0}, {Topic: "in", Partition: 1}})
	if code != 0 || len(offs) != 2 {
		t.Fatalf("fetch %s: %d %v", group, code, offs)
	}
	return [2]int64{offs[0].Offset, offs[1].Offset}
}

// TestGroupTxnOffsetsQueuedSequences: two TxnOffsetCommits of one
// producer in one transaction, the second decided while the first's
// append is still in flight, to one group and to two groups of the same
// offsets partition. Kafka 2.8 writes such batches with base sequence 0
// and checks no sequence on the coordinator's own appends; Samsa's log
// checks and de-duplicates every producer batch, so both batches must
// carry consecutive sequences in log order, or the second is taken for a
// retry of the first and silently not written. After the COMMIT marker
// and a reload of the group coordinator, every offset is there.
func TestGroupTxnOffsetsQueuedSequences(t *testing.T) {
	cfg := testConfig()
	second := ""
	for i := 0; second == ""; i++ {
		if g := fmt.Sprintf("tg%d", i); PartitionFor(g, cfg.NumPartitions) == PartitionFor("tg", cfg.NumPartitions) {
			second = g
		}
	}
	for _, groups := range [][2]string{{"tg", "tg"}, {"tg", second}} {
		var hl *holdLog
		e := newEnvWrapped(t, cfg, func(l OffsetLog) OffsetLog { hl = newHoldLog(l); return hl })
		const pid = 42
		hl.hold()
		first := txnCommitAsync(e, groups[0], pid, 0, 10)
		select {
		case <-hl.started:
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: the first append did not start", groups)
		}
		next := txnCommitAsync(e, groups[1], pid, 1, 20)
		testwait.For(t, 10*time.Second, func() error {
			if g, _ := e.c.lookup(groups[1], false); g == nil {
				return fmt.Errorf("%v: no group %s yet", groups, groups[1])
			}
			queued := false
			e.inspect(groups[1], func(g *group) { queued = len(g.appendQ) > 0 || g.appending && groups[0] != groups[1] })
			if !queued {
				return fmt.Errorf("%v: the second commit is not queued yet", groups)
			}
			return nil
		})
		hl.unhold()
		for _, ch := range []<-chan []int16{first, next} {
			if codes := recv(t, ch); len(codes) != 1 || codes[0] != 0 {
				t.Fatalf("%v: TxnOffsetCommit: %v", groups, codes)
			}
		}
		p := e.c.PartitionFor(groups[0])
		if err := e.olog.appendMarker(p, pid, 0, true); err != nil {
			t.Fatal(err)
		}
		e.c.CompleteTxnOffsets(pid, []int32{p}, true)
		want := map[string][2]int64{groups[0]: {10, -1}, groups[1]: {-1, 20}}
		if groups[0] == groups[1] {
			want[groups[0]] = [2]int64{10, 20}
		}
		check := func(when string) {
			testwait.For(t, 10*time.Second, func() error {
				for g, offs := range want {
					if got := committedIn(t, e, g); got != offs {
						return fmt.Errorf("%v %s: group %s committed %v, want %v", groups, when, g, got, offs)
					}
				}
				return nil
			})
		}
		check("after the marker")
		e.restart()
		check("after a reload")
	}
}
