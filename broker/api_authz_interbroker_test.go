package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// TestAPIAuthzClientCannotStopReplicasOrShutDownBrokers covers the rest of
// CVE-2018-1288's list (TestAPIAuthzImpersonatingAFollowerOrController has
// Fetch, LeaderAndIsr and UpdateMetadata): a client with Read on a topic
// sends StopReplica with delete=true to the partition's leader and
// ControlledShutdown for that leader to the controller. Both answer
// CLUSTER_AUTHORIZATION_FAILED (Kafka 2.8's authorizeClusterOperation
// CLUSTER_ACTION) and nothing moves: the leader keeps its partition, its
// record and its leadership. OffsetForLeaderEpoch with a follower's
// replica_id needs no ClusterAction but then Describe per topic
// (KafkaApis.handleOffsetForLeaderEpochRequest): allowed on the topic the
// client may read, TOPIC_AUTHORIZATION_FAILED on one it may not.
func TestAPIAuthzClientCannotStopReplicasOrShutDownBrokers(t *testing.T) {
	grants := append(trustedHostACLs(true),
		acl.Binding{Resource: litRes(acl.ResourceTopic, "t"), Entry: anonEntry(authzClientIP, acl.OpRead, acl.Allow)})
	c := authzCluster(t, 2, grants)
	c.CreateTopic(t, "t", 1, 2)
	c.CreateTopic(t, "u", 1, 2)
	c.WaitForISR(t, "t", 0, 2)
	leader := c.WaitForLeader(t, "t", 0)
	li := c.Index(leader)
	trusted := dialRawFrom(t, c.Addr(li), authzTrustedIP)
	batch, err := record.Build(record.NewBuildHeader(0, 1), []record.Record{{Value: []byte("kept")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	pr := mustRoundTrip(t, trusted, brokertest.ProduceRequest(7, -1, 5000, "t", 0, batch)).(*kmsg.ProduceResponse)
	if code := pr.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("trusted produce: code %d", code)
	}
	before, ok := c.Broker(li).Metadata().Partition("t", 0)
	if !ok {
		t.Fatal("t-0 not in the leader's metadata")
	}

	rc := dialRawFrom(t, c.Addr(li), authzClientIP)
	stop := kmsg.NewPtrStopReplicaRequest()
	stop.SetVersion(3)
	stop.ControllerID, stop.ControllerEpoch, stop.BrokerEpoch = leader, 1<<20, -1
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = "t"
	ps := kmsg.NewStopReplicaRequestTopicPartitionState()
	ps.Partition, ps.LeaderEpoch, ps.Delete = 0, 1<<20, true
	st.PartitionStates = append(st.PartitionStates, ps)
	stop.Topics = append(stop.Topics, st)
	if r := mustRoundTrip(t, rc, stop).(*kmsg.StopReplicaResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(r.Partitions) != 0 {
		t.Fatalf("StopReplica from a client: code %d, partitions %+v", r.ErrorCode, r.Partitions)
	}

	ctrl := dialRawFrom(t, c.Addr(c.Controller()), authzClientIP)
	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.SetVersion(3)
	cs.BrokerID, cs.BrokerEpoch = leader, -1
	if r := mustRoundTrip(t, ctrl, cs).(*kmsg.ControlledShutdownResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(r.PartitionsRemaining) != 0 {
		t.Fatalf("ControlledShutdown from a client: code %d, remaining %+v", r.ErrorCode, r.PartitionsRemaining)
	}

	// Both answers are given after the refusal only: nothing was started.
	after, ok := c.Broker(li).Metadata().Partition("t", 0)
	if !ok || after.Leader != before.Leader || after.LeaderEpoch != before.LeaderEpoch {
		t.Fatalf("t-0 moved after refused control requests: before %+v, after %+v (ok=%v)", before, after, ok)
	}
	fr := mustRoundTrip(t, rc, brokertest.FetchRequest(-1, 10, "t")).(*kmsg.FetchResponse)
	fp := fr.Topics[0].Partitions[0]
	if fp.ErrorCode != 0 || fp.HighWatermark != 1 || len(fp.RecordBatches) == 0 {
		t.Fatalf("t-0 after a refused StopReplica(delete): code %d, high watermark %d, %d bytes", fp.ErrorCode, fp.HighWatermark, len(fp.RecordBatches))
	}

	for _, tc := range []struct {
		topic string
		want  int16
	}{{"t", 0}, {"u", kerr.TopicAuthorizationFailed.Code}} {
		oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
		oe.SetVersion(3)
		oe.ReplicaID = c.Broker(1 - li).ID()
		ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
		ot.Topic = tc.topic
		op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		op.Partition, op.CurrentLeaderEpoch, op.LeaderEpoch = 0, -1, 0
		ot.Partitions = append(ot.Partitions, op)
		oe.Topics = append(oe.Topics, ot)
		r := mustRoundTrip(t, rc, oe).(*kmsg.OffsetForLeaderEpochResponse)
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			t.Fatalf("OffsetForLeaderEpoch %s: answer %+v", tc.topic, r)
		}
		// "u" may be led by the other broker: the refusal comes before
		// the leader check, as in Kafka.
		got := r.Topics[0].Partitions[0]
		if got.ErrorCode != tc.want {
			t.Fatalf("OffsetForLeaderEpoch %s as replica %d from a client: code %d, want %d", tc.topic, oe.ReplicaID, got.ErrorCode, tc.want)
		}
		if tc.want == 0 && got.EndOffset != 1 {
			t.Fatalf("OffsetForLeaderEpoch t: end offset %d, want 1", got.EndOffset)
		}
	}
}
