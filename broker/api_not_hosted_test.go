package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
	"samsa/kafka"
)

// TestAPINotHostedPartition: as Kafka 2.8's ReplicaManager.getPartitionOrError, a partition
// the broker's metadata knows but that has no replica on this broker answers
// NOT_LEADER_OR_FOLLOWER (the client refreshes its metadata and finds the leader), while a
// partition no metadata knows answers UNKNOWN_TOPIC_OR_PARTITION. Produce, Fetch, ListOffsets
// and OffsetForLeaderEpoch all map it the same way.
func TestAPINotHostedPartition(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	c.CreateTopic(t, "solo", 1, 1)
	leader := c.Index(c.WaitForLeader(t, "solo", 0))
	other := 1 - leader
	tp := kafka.TopicPartition{Topic: "solo"}
	if c.Broker(other).Replicas().Partition(tp) != nil {
		t.Fatalf("broker %d hosts solo-0 with RF=1", other)
	}
	// The other broker's metadata learns the topic from the controller's UpdateMetadata.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if got := len(c.Broker(other).Metadata().Partitions("solo")); got != 1 {
			return fmt.Errorf("broker %d knows %d partitions of solo", other, got)
		}
		return nil
	})
	rc := brokertest.DialRaw(t, c.Addr(other))
	batch := edgeBatch(t, record.CodecNone)
	codes := edgeProduce(t, rc, 8, 1, []edgePart{
		{name: "known, not hosted", topic: "solo", records: batch},
		{name: "unknown topic", topic: "nowhere", records: batch},
		{name: "unknown partition", topic: "solo", partition: 7, records: batch},
	})
	want := []int16{kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code}
	for i := range want {
		if codes[i] != want[i] {
			t.Errorf("produce %d: error %d, want %d", i, codes[i], want[i])
		}
	}

	if rp := brokertest.FollowerFetch(t, c.Addr(other), "solo", 11, -1, 0, -1, 0); rp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("fetch: error %d, want NOT_LEADER_OR_FOLLOWER", rp.ErrorCode)
	}
	if rp := brokertest.FollowerFetch(t, c.Addr(other), "nowhere", 11, -1, 0, -1, 0); rp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("fetch of an unknown topic: error %d, want UNKNOWN_TOPIC_OR_PARTITION", rp.ErrorCode)
	}
	if p := listOffsetsOne(t, c.Addr(other), "solo", 4, -1, -1, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("list offsets: error %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
	}
	if p := epochEndOne(t, c.Addr(other), "solo", 3, -1, 0); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("offset for leader epoch: error %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
	}
}

// TestAPIStaleEpochOnFollowerIsFenced: Kafka 2.8 checks a request's current leader epoch
// before leadership (Partition.getLocalLog), so a consumer with an old epoch that reaches a
// follower learns it is fenced, at every Fetch version that carries the epoch (v9+) and in
// ListOffsets (v4+) and OffsetForLeaderEpoch; with the current epoch the follower answers
// NOT_LEADER_OR_FOLLOWER (below Fetch v11, where KIP-392 reads do not apply).
func TestAPIStaleEpochOnFollowerIsFenced(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	l, _ := followerSetup(t, c, "se", 3)
	old, now := demoteLeader(t, c, l, "se")
	addr := c.Addr(l) // now a follower
	for _, v := range []int16{9, 10} {
		if rp := brokertest.FollowerFetch(t, addr, "se", v, -1, 0, old, 0); rp.ErrorCode != kerr.FencedLeaderEpoch.Code {
			t.Errorf("fetch v%d, old epoch: error %d, want FENCED_LEADER_EPOCH", v, rp.ErrorCode)
		}
		if rp := brokertest.FollowerFetch(t, addr, "se", v, -1, 0, now, 0); rp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Errorf("fetch v%d, current epoch: error %d, want NOT_LEADER_OR_FOLLOWER", v, rp.ErrorCode)
		}
		if rp := brokertest.FollowerFetch(t, addr, "se", v, -1, 0, now+1, 0); rp.ErrorCode != kerr.UnknownLeaderEpoch.Code {
			t.Errorf("fetch v%d, future epoch: error %d, want UNKNOWN_LEADER_EPOCH", v, rp.ErrorCode)
		}
	}
	if p := listOffsetsOne(t, addr, "se", 4, -1, old, -1); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("list offsets, old epoch: error %d, want FENCED_LEADER_EPOCH", p.ErrorCode)
	}
	if p := listOffsetsOne(t, addr, "se", 4, -1, now, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("list offsets, current epoch: error %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
	}
	if p := epochEndOne(t, addr, "se", 3, old, old); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("offset for leader epoch, old current epoch: error %d, want FENCED_LEADER_EPOCH", p.ErrorCode)
	}
	if p := epochEndOne(t, addr, "se", 3, now, old); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("offset for leader epoch, current epoch: error %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
	}
}

// listOffsetsOne sends a ListOffsets for timestamp ts of topic-0 with the given replica id
// and current leader epoch and returns the partition's answer.
func listOffsetsOne(t *testing.T, addr, topic string, version int16, replicaID, epoch int32, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	rc := brokertest.DialRaw(t, addr)
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(version)
	req.ReplicaID = replicaID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.MaxNumOffsets, rp.CurrentLeaderEpoch = ts, 1, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kr.(*kmsg.ListOffsetsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("list offsets: %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// epochEndOne sends a consumer's OffsetForLeaderEpoch (replica id -1 from v3) for topic-0,
// asking for the end of leaderEpoch with the given current leader epoch.
func epochEndOne(t *testing.T, addr, topic string, version int16, currentEpoch, leaderEpoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	t.Helper()
	rc := brokertest.DialRaw(t, addr)
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(version)
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.CurrentLeaderEpoch, rp.LeaderEpoch = currentEpoch, leaderEpoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kr.(*kmsg.OffsetForLeaderEpochResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("offset for leader epoch: %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}
