package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// longPoll sends an incremental fetch of session id at epoch that parks
// (min_bytes 1, max_wait_ms wait) and returns its answer on the channel.
func longPoll(t *testing.T, rc *brokertest.RawConn, id, epoch int32, wait time.Duration) <-chan *kmsg.FetchResponse {
	return goFetch(t, rc, epochFetch("", 0, -1, id, epoch, false, wait))
}

// TestAPIFetchSessionChangedOnly: an incremental fetch examines only the
// partitions that changed since they were last answered (01_fetch_changed.go),
// and still answers exactly what Kafka's whole-session read does: a parked
// long poll is woken by an append to one of its session's partitions and
// answers only that one; a moved log start offset (DeleteRecords) is
// answered; an unchanged session answers nothing, even at its deadline.
func TestAPIFetchSessionChangedOnly(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "fc", 3, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	prc := brokertest.DialRaw(t, c.Addr(0))
	full := sessionFetch(t, rc, 0, 0, "fc", map[int32]int64{0: 0, 1: 0, 2: 0}, nil)
	if full.ErrorCode != 0 || full.SessionID == 0 || len(answered(full)) != 3 {
		t.Fatalf("full fetch: error %d session %d partitions %v", full.ErrorCode, full.SessionID, answered(full))
	}
	id := full.SessionID

	// An idle long poll ends at its deadline with nothing.
	if r := <-longPoll(t, rc, id, 1, 50*time.Millisecond); r == nil || r.ErrorCode != 0 || len(r.Topics) != 0 {
		t.Fatalf("idle long poll answered %v", r)
	}

	// A parked long poll is woken by an append to partition 0 and answers
	// it alone, long before its 60 s deadline.
	ch := longPoll(t, rc, id, 2, 60*time.Second)
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if n := c.Broker(0).Replicas().Fetch.Size(); n != 1 {
			return fmt.Errorf("%d fetches parked, want 1", n)
		}
		return nil
	})
	if code, _ := produceRaw(t, prc, "fc", oneBatch(t, "x")); code != 0 {
		t.Fatalf("produce: %d", code)
	}
	select {
	case r := <-ch:
		if got := answered(r); len(got) != 1 || got[0] != [2]int64{1, 1} {
			t.Fatalf("woken long poll answered %v, want partition 0 with HW 1 and records", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the long poll was not woken by the append")
	}
	// The client moves partition 0's offset: nothing new.
	if got := answered(sessionFetch(t, rc, id, 3, "fc", map[int32]int64{0: 1}, nil)); len(got) != 0 {
		t.Fatalf("epoch 3: answered %v, want nothing", got)
	}

	// DeleteRecords moves partition 0's log start: the next incremental
	// answer carries it (no record, same high watermark).
	if code := deleteRecordsOne(t, c.Addr(0), "fc", 1); code != 0 {
		t.Fatalf("delete records: error %d", code)
	}
	r := sessionFetch(t, rc, id, 4, "fc", nil, nil)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].Partition != 0 ||
		r.Topics[0].Partitions[0].LogStartOffset != 1 {
		t.Fatalf("epoch 4 after DeleteRecords: %+v, want partition 0 with log start 1", r.Topics)
	}
	if got := answered(sessionFetch(t, rc, id, 5, "fc", nil, nil)); len(got) != 0 {
		t.Fatalf("epoch 5: answered %v, want nothing", got)
	}
}

// TestAPIFetchSessionRetentionMovesLogStart: retention deleting the oldest
// segments moves the log start offset outside any request; a consumer's
// changed-only incremental fetch answers the partition with the new log
// start (the storage's log-start notice reaches the fetch sessions), once.
func TestAPIFetchSessionRetentionMovesLogStart(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("log.retention.check.interval.ms", "50"))
	seg, ret := "100", "1"
	c.CreateTopic(t, "fr", 1, 1, map[string]*string{"segment.bytes": &seg, "retention.ms": &ret})
	rc := brokertest.DialRaw(t, c.Addr(0))
	prc := brokertest.DialRaw(t, c.Addr(0))
	full := sessionFetch(t, rc, 0, 0, "fr", map[int32]int64{0: 0}, nil)
	if full.ErrorCode != 0 || full.SessionID == 0 {
		t.Fatalf("full fetch: error %d session %d", full.ErrorCode, full.SessionID)
	}
	id, epoch := full.SessionID, int32(1)
	// Three batches of about 75 bytes, a segment each (two do not fit in
	// segment.bytes); the consumer moves to the log end.
	for i := range 3 {
		if code, _ := produceRaw(t, prc, "fr", oneBatch(t, fmt.Sprintf("record-%d", i))); code != 0 {
			t.Fatalf("produce: %d", code)
		}
	}
	// Retention (every 50 ms) deletes the two older segments and moves the
	// log start to 2, maybe before this fetch reads (under load), maybe in
	// two steps: every answer that carries the partition must carry a new
	// log start, until it is 2.
	var got kmsg.FetchResponseTopicPartition
	logStart, hw := int64(0), int64(0) // what the full fetch answered
	take := func(r *kmsg.FetchResponse) error {
		if r.ErrorCode != 0 {
			t.Fatalf("incremental fetch: error %d", r.ErrorCode)
		}
		if len(r.Topics) == 0 {
			return fmt.Errorf("no answer yet (log start %d)", logStart)
		}
		got = r.Topics[0].Partitions[0]
		if got.LogStartOffset <= logStart && got.HighWatermark == hw {
			t.Fatalf("answered log start %d and high watermark %d again", got.LogStartOffset, hw)
		}
		logStart, hw = got.LogStartOffset, got.HighWatermark
		if logStart != 2 {
			return fmt.Errorf("log start %d so far", logStart)
		}
		return nil
	}
	if take(sessionFetch(t, rc, id, epoch, "fr", map[int32]int64{0: 3}, nil)) != nil {
		brokertest.WaitFor(t, 30*time.Second, func() error {
			epoch++
			return take(sessionFetch(t, rc, id, epoch, "fr", nil, nil))
		})
	}
	epoch++
	if got.ErrorCode != 0 || got.LogStartOffset != 2 || got.HighWatermark != 3 {
		t.Fatalf("after retention: error %d, log start %d, high watermark %d; want 0, 2, 3", got.ErrorCode, got.LogStartOffset, got.HighWatermark)
	}
	if r := sessionFetch(t, rc, id, epoch, "fr", nil, nil); len(r.Topics) != 0 {
		t.Fatalf("the next fetch answered %+v again, want nothing", r.Topics)
	}
}
