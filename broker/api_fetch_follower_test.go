package broker_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/kafka"
)

// batchOffsets returns the first and next offsets covered by the v2 batches
// of recs (-1, -1 when empty).
func batchOffsets(t *testing.T, recs []byte) (first, next int64) {
	t.Helper()
	first, next = -1, -1
	for i := 0; len(recs) >= 61 && i < 10000; i++ {
		base := int64(binary.BigEndian.Uint64(recs))
		size := 12 + int(binary.BigEndian.Uint32(recs[8:]))
		if size > len(recs) {
			t.Fatalf("partial batch (%d > %d bytes)", size, len(recs))
		}
		if first < 0 {
			first = base
		}
		next = base + int64(binary.BigEndian.Uint32(recs[23:])) + 1
		recs = recs[size:]
	}
	return first, next
}

// followerSetup creates an RF=2 topic on a 2-broker cluster, produces n
// records with acks=all and waits until the follower's high watermark
// reached n. It returns the leader's and the follower's index.
func followerSetup(t *testing.T, c *brokertest.Cluster, topic string, n int) (leader, follower int) {
	t.Helper()
	c.CreateTopic(t, topic, 1, 2)
	c.WaitForISR(t, topic, 0, 2)
	leader = c.Index(c.WaitForLeader(t, topic, 0))
	follower = 1 - leader
	cfg := sarama.NewConfig()
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	p := c.SyncProducer(t, cfg)
	for i := 0; i < n; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	waitFollowerHW(t, c, follower, topic, int64(n))
	return leader, follower
}

func waitFollowerHW(t *testing.T, c *brokertest.Cluster, i int, topic string, hw int64) {
	t.Helper()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		p := c.Broker(i).Replicas().Partition(kafka.TopicPartition{Topic: topic, Partition: 0})
		if p == nil {
			return fmt.Errorf("broker %d hosts no replica", i)
		}
		if s := p.State(); s.IsLeader || s.HighWatermark != hw {
			return fmt.Errorf("broker %d: leader %v, HW %d, want follower at HW %d", i, s.IsLeader, s.HighWatermark, hw)
		}
		return nil
	})
}

// TestAPIFetchFromFollower: as Kafka 2.8 (KIP-392), a consumer Fetch v11+
// (replica id -1, and the debugging -2) sent to a follower is served from
// the follower's log up to its high watermark, with preferred_read_replica
// -1; v10 gets NOT_LEADER_OR_FOLLOWER; the current leader epoch is checked
// against the follower's view; a parked fetch on the follower wakes when its
// HW moves; a franz-go consumer is unaffected.
func TestAPIFetchFromFollower(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	_, f := followerSetup(t, c, "ff", 10)
	fAddr := c.Addr(f)
	epoch := c.Broker(f).Replicas().Partition(kafka.TopicPartition{Topic: "ff"}).State().LeaderEpoch

	for _, tc := range []struct {
		version   int16
		replicaID int32
	}{{11, -1}, {12, -1}, {11, -2}, {12, -2}} {
		rp := brokertest.FollowerFetch(t, fAddr, "ff", tc.version, tc.replicaID, 0, epoch, 0)
		first, next := batchOffsets(t, rp.RecordBatches)
		if rp.ErrorCode != 0 || rp.HighWatermark != 10 || rp.LastStableOffset != 10 || rp.PreferredReadReplica != -1 ||
			first != 0 || next != 10 {
			t.Errorf("v%d replica %d: error %d HW %d LSO %d preferred %d, offsets [%d, %d)", tc.version, tc.replicaID,
				rp.ErrorCode, rp.HighWatermark, rp.LastStableOffset, rp.PreferredReadReplica, first, next)
		}
	}
	for _, v := range []int16{4, 10} {
		if rp := brokertest.FollowerFetch(t, fAddr, "ff", v, -1, 0, -1, 0); rp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Errorf("v%d to the follower: error %d, want NOT_LEADER_OR_FOLLOWER", v, rp.ErrorCode)
		}
	}
	if rp := brokertest.FollowerFetch(t, fAddr, "ff", 11, -1, 0, epoch+1, 0); rp.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("newer epoch: error %d, want UNKNOWN_LEADER_EPOCH", rp.ErrorCode)
	}
	if rp := brokertest.FollowerFetch(t, fAddr, "ff", 11, -1, 11, epoch, 0); rp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Errorf("offset past the log end: error %d, want OFFSET_OUT_OF_RANGE", rp.ErrorCode)
	}

	// A fetch parked at the follower's HW wakes when the follower's HW moves.
	done := make(chan kmsg.FetchResponseTopicPartition, 1)
	go func() { done <- brokertest.FollowerFetch(t, fAddr, "ff", 11, -1, 10, epoch, 15000) }()
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if c.Broker(f).Replicas().Fetch.Size() == 0 {
			return fmt.Errorf("fetch not parked")
		}
		return nil
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(fAddr), kgo.ConsumeTopics("ff"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "ff", Value: []byte("10")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case rp := <-done:
		if first, next := batchOffsets(t, rp.RecordBatches); rp.ErrorCode != 0 || first != 10 || next != 11 {
			t.Errorf("woken fetch: error %d, offsets [%d, %d)", rp.ErrorCode, first, next)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("woken after %v", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("parked follower fetch not answered")
	}

	// franz-go fetches from the leader (no rack, so no preferred replica)
	// and reads all 11 records.
	got := 0
	for got < 11 && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded {
				t.Fatalf("poll: %v", e.Err)
			}
		}
		got += fs.NumRecords()
	}
	if got != 11 {
		t.Fatalf("franz-go consumed %d records, want 11", got)
	}
}

// TestAPIFetchFromFollowerFencedEpoch: a follower checks a consumer's
// current leader epoch against its own view: after a leader change, the old
// epoch gets FENCED_LEADER_EPOCH from the follower and the new one reads.
func TestAPIFetchFromFollowerFencedEpoch(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	l, _ := followerSetup(t, c, "fe", 5)
	old, now := demoteLeader(t, c, l, "fe")
	waitFollowerHW(t, c, l, "fe", 5)
	if rp := brokertest.FollowerFetch(t, c.Addr(l), "fe", 11, -1, 0, old, 0); rp.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("old epoch: error %d, want FENCED_LEADER_EPOCH", rp.ErrorCode)
	}
	rp := brokertest.FollowerFetch(t, c.Addr(l), "fe", 11, -1, 0, now, 0)
	if first, next := batchOffsets(t, rp.RecordBatches); rp.ErrorCode != 0 || first != 0 || next != 5 {
		t.Errorf("current epoch: error %d, offsets [%d, %d)", rp.ErrorCode, first, next)
	}
}

// demoteLeader kills broker l, the leader of topic-0 on a 2-broker cluster, waits until the
// other broker leads, restarts l as a follower of the new epoch and waits for a full ISR. It
// returns the leader epoch before and after the change.
func demoteLeader(t *testing.T, c *brokertest.Cluster, l int, topic string) (old, now int32) {
	t.Helper()
	tp := kafka.TopicPartition{Topic: topic}
	old = c.Broker(l).Replicas().Partition(tp).State().LeaderEpoch
	c.Kill(l)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if s := c.Broker(1 - l).Replicas().Partition(tp).State(); !s.IsLeader {
			return fmt.Errorf("broker %d not leader yet", 1-l)
		}
		return nil
	})
	c.Restart(l)
	c.WaitForISR(t, topic, 0, 2)
	now = c.Broker(l).Replicas().Partition(tp).State().LeaderEpoch
	if now <= old {
		t.Fatalf("epoch %d after the leader change, was %d", now, old)
	}
	return old, now
}

// TestAPIListOffsetsDebuggingReplicaOnFollower: as Kafka 2.8, ListOffsets
// from replica id -2 is answered by a follower (latest = its log end), while
// a consumer's (-1) gets NOT_LEADER_OR_FOLLOWER there.
func TestAPIListOffsetsDebuggingReplicaOnFollower(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	_, f := followerSetup(t, c, "lo", 7)
	list := func(version int16, replicaID int32, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		return listOffsetsOne(t, c.Addr(f), "lo", version, replicaID, -1, ts)
	}
	for _, v := range []int16{1, 4, 6} {
		if p := list(v, -2, -1); p.ErrorCode != 0 || p.Offset != 7 {
			t.Errorf("v%d -2 latest: error %d offset %d, want 7", v, p.ErrorCode, p.Offset)
		}
		if p := list(v, -2, -2); p.ErrorCode != 0 || p.Offset != 0 {
			t.Errorf("v%d -2 earliest: error %d offset %d, want 0", v, p.ErrorCode, p.Offset)
		}
		if p := list(v, -1, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Errorf("v%d -1 latest: error %d, want NOT_LEADER_OR_FOLLOWER", v, p.ErrorCode)
		}
	}
	if p := list(0, -2, -1); p.ErrorCode != 0 || len(p.OldStyleOffsets) != 1 || p.OldStyleOffsets[0] != 7 {
		t.Errorf("v0 -2 latest: error %d offsets %v, want [7]", p.ErrorCode, p.OldStyleOffsets)
	}
}
