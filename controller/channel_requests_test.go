package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/kafka"
)

// roundTrip encodes req at its version and decodes it again, as a broker would.
func roundTrip(t *testing.T, req kmsg.Request) kmsg.Request {
	t.Helper()
	out := kmsg.RequestForKey(req.Key())
	out.SetVersion(req.GetVersion())
	if err := out.ReadFrom(req.AppendTo(nil)); err != nil {
		t.Fatalf("%T v%d: %v", req, req.GetVersion(), err)
	}
	return out
}

var testHeader = requestHeader{controllerID: 3, controllerEpoch: 7, brokerEpoch: 4242}

// TestControllerBuildLeaderAndIsr_v0_to_v5 checks every LeaderAndIsr version Kafka 2.8 has:
// the partition states, IsNew (v1+), broker epoch and topic grouping (v2+), topic ids (v5).
func TestControllerBuildLeaderAndIsr_v0_to_v5(t *testing.T) {
	id := [16]byte{1, 2, 3}
	parts := []laiPartition{
		{tp: kafka.TopicPartition{Topic: "a", Partition: 0}, topicID: id, state: LeaderAndIsr{Leader: 1, LeaderEpoch: 2, Isr: []int32{1, 2}, ControllerEpoch: 6, ZkVersion: 9}, replicas: []int32{1, 2}, isNew: true},
		{tp: kafka.TopicPartition{Topic: "a", Partition: 1}, topicID: id, state: LeaderAndIsr{Leader: 2, Isr: []int32{2}, ControllerEpoch: 7}, replicas: []int32{2, 1}},
		{tp: kafka.TopicPartition{Topic: "b", Partition: 0}, state: LeaderAndIsr{Leader: NoLeader, Isr: []int32{3}}, replicas: []int32{3}},
	}
	leaders := []liveLeader{{id: 1, host: "h1", port: 9091}, {id: 2, host: "h2", port: 9092}}
	for v := int16(0); v <= DefaultLeaderAndIsrVersion; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			req := roundTrip(t, buildLeaderAndIsr(v, testHeader, parts, leaders)).(*kmsg.LeaderAndISRRequest)
			if req.ControllerID != 3 || req.ControllerEpoch != 7 {
				t.Fatalf("header %+v", req)
			}
			if v >= 2 && req.BrokerEpoch != 4242 {
				t.Fatalf("broker epoch %d at v%d", req.BrokerEpoch, v)
			}
			var got []kmsg.LeaderAndISRRequestTopicPartition
			if v <= 1 {
				got = req.PartitionStates
			} else {
				if len(req.TopicStates) != 2 || req.TopicStates[0].Topic != "a" || req.TopicStates[1].Topic != "b" {
					t.Fatalf("topic states %+v", req.TopicStates)
				}
				if v >= 5 && req.TopicStates[0].TopicID != id {
					t.Fatalf("topic id %v", req.TopicStates[0].TopicID)
				}
				for _, ts := range req.TopicStates {
					for _, ps := range ts.PartitionStates {
						ps.Topic = ts.Topic
						got = append(got, ps)
					}
				}
			}
			if len(got) != 3 {
				t.Fatalf("%d partition states", len(got))
			}
			for i, p := range parts {
				g := got[i]
				if g.Topic != p.tp.Topic || g.Partition != p.tp.Partition || g.Leader != p.state.Leader ||
					g.LeaderEpoch != p.state.LeaderEpoch || !slices.Equal(g.ISR, p.state.Isr) || g.ZKVersion != p.state.ZkVersion ||
					g.ControllerEpoch != p.state.ControllerEpoch || !slices.Equal(g.Replicas, p.replicas) {
					t.Fatalf("partition %d: %+v", i, g)
				}
				if v >= 1 && g.IsNew != p.isNew {
					t.Fatalf("partition %d IsNew %v", i, g.IsNew)
				}
			}
			if len(req.LiveLeaders) != 2 || req.LiveLeaders[1].Host != "h2" || req.LiveLeaders[1].Port != 9092 {
				t.Fatalf("live leaders %+v", req.LiveLeaders)
			}
		})
	}
}

// TestControllerBuildUpdateMetadata_v0_to_v7 checks every UpdateMetadata version: endpoints
// (v1+), rack (v2+), listener names (v3+), offline replicas (v4+), broker epoch and topic
// grouping (v5+), topic ids (v7), and the leader -2 of topics being deleted.
func TestControllerBuildUpdateMetadata_v0_to_v7(t *testing.T) {
	parts := []umPartition{
		{tp: kafka.TopicPartition{Topic: "a", Partition: 0}, state: LeaderAndIsr{Leader: 1, LeaderEpoch: 3, Isr: []int32{1}, ControllerEpoch: 7, ZkVersion: 4}, replicas: []int32{1, 2}, offline: []int32{2}},
		{tp: kafka.TopicPartition{Topic: "gone", Partition: 0}, state: LeaderAndIsr{Leader: LeaderDuringDelete, Isr: []int32{1}}, replicas: []int32{1}},
	}
	brokers := []LiveBroker{
		{ID: 1, Epoch: 10, Rack: "r1", Endpoints: []Endpoint{{"PLAINTEXT", "PLAINTEXT", "h1", 9091}, {"SSL", "SSL", "h1", 9093}}},
		{ID: 2, Epoch: 11, Endpoints: []Endpoint{{"INTERNAL", "SASL_PLAINTEXT", "h2", 9092}}},
	}
	for v := int16(0); v <= DefaultUpdateMetadataVersion; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			req := roundTrip(t, buildUpdateMetadata(v, testHeader, parts, brokers)).(*kmsg.UpdateMetadataRequest)
			if req.ControllerID != 3 || req.ControllerEpoch != 7 || (v >= 5 && req.BrokerEpoch != 4242) {
				t.Fatalf("header %+v", req)
			}
			if len(req.LiveBrokers) != 2 {
				t.Fatalf("live brokers %+v", req.LiveBrokers)
			}
			b1, b2 := req.LiveBrokers[0], req.LiveBrokers[1]
			switch {
			case v == 0:
				if b1.Host != "h1" || b1.Port != 9091 {
					t.Fatalf("v0 broker %+v", b1)
				}
			default:
				if len(b1.Endpoints) != 2 || b1.Endpoints[1].SecurityProtocol != 1 || b2.Endpoints[0].SecurityProtocol != 2 {
					t.Fatalf("endpoints %+v %+v", b1.Endpoints, b2.Endpoints)
				}
				if v >= 3 && (b1.Endpoints[1].ListenerName != "SSL" || b2.Endpoints[0].ListenerName != "INTERNAL") {
					t.Fatalf("listener names %+v %+v", b1.Endpoints, b2.Endpoints)
				}
			}
			if v >= 2 && (b1.Rack == nil || *b1.Rack != "r1" || b2.Rack != nil) {
				t.Fatalf("racks %v %v", b1.Rack, b2.Rack)
			}
			var got []kmsg.UpdateMetadataRequestTopicPartition
			if v <= 4 {
				got = req.PartitionStates
			} else {
				for _, ts := range req.TopicStates {
					for _, ps := range ts.PartitionStates {
						ps.Topic = ts.Topic
						got = append(got, ps)
					}
				}
			}
			if len(got) != 2 || got[0].Topic != "a" || got[0].Leader != 1 || got[0].LeaderEpoch != 3 || got[0].ZKVersion != 4 ||
				!slices.Equal(got[0].Replicas, []int32{1, 2}) || got[1].Leader != LeaderDuringDelete {
				t.Fatalf("partition states %+v", got)
			}
			if v >= 4 && !slices.Equal(got[0].OfflineReplicas, []int32{2}) {
				t.Fatalf("offline replicas %v", got[0].OfflineReplicas)
			}
		})
	}
}

// TestControllerBuildStopReplica_v0_to_v3 checks every StopReplica version: (topic,
// partition) pairs at v0, grouped partitions with broker epoch at v1–2, per-partition leader
// epoch and delete flag at v3.
func TestControllerBuildStopReplica_v0_to_v3(t *testing.T) {
	parts := []stopPartition{{kafka.TopicPartition{Topic: "a", Partition: 0}, 5}, {kafka.TopicPartition{Topic: "a", Partition: 2}, 6}, {kafka.TopicPartition{Topic: "b", Partition: 1}, -2}}
	for v := int16(0); v <= DefaultStopReplicaVersion; v++ {
		for _, del := range []bool{false, true} {
			t.Run(fmt.Sprintf("v%d/delete=%v", v, del), func(t *testing.T) {
				req := roundTrip(t, buildStopReplica(v, testHeader, del, parts)).(*kmsg.StopReplicaRequest)
				if req.ControllerID != 3 || req.ControllerEpoch != 7 || (v >= 1 && req.BrokerEpoch != 4242) {
					t.Fatalf("header %+v", req)
				}
				if v <= 2 && req.DeletePartitions != del {
					t.Fatalf("delete %v", req.DeletePartitions)
				}
				var got []stopPartition
				var dels []bool
				for _, tpc := range req.Topics {
					switch {
					case v == 0:
						got = append(got, stopPartition{tp: kafka.TopicPartition{Topic: tpc.Topic, Partition: tpc.Partition}})
					case v <= 2:
						for _, p := range tpc.Partitions {
							got = append(got, stopPartition{tp: kafka.TopicPartition{Topic: tpc.Topic, Partition: p}})
						}
					default:
						for _, ps := range tpc.PartitionStates {
							got = append(got, stopPartition{kafka.TopicPartition{Topic: tpc.Topic, Partition: ps.Partition}, ps.LeaderEpoch})
							dels = append(dels, ps.Delete)
						}
					}
				}
				if len(got) != 3 {
					t.Fatalf("partitions %+v", got)
				}
				for i, p := range parts {
					if got[i].tp != p.tp || (v >= 3 && (got[i].leaderEpoch != p.leaderEpoch || dels[i] != del)) {
						t.Fatalf("partition %d: %+v", i, got[i])
					}
				}
			})
		}
	}
}

// TestControllerBuildRequestsSurviveVersionChange: a client that re-picks the version after
// the build (peer.Client.Request) still sends every partition.
func TestControllerBuildRequestsSurviveVersionChange(t *testing.T) {
	lparts := []laiPartition{{tp: kafka.TopicPartition{Topic: "a", Partition: 0}, state: LeaderAndIsr{Leader: 1, Isr: []int32{1}}, replicas: []int32{1}}}
	for v := int16(0); v <= DefaultLeaderAndIsrVersion; v++ {
		req := buildLeaderAndIsr(DefaultLeaderAndIsrVersion, testHeader, lparts, nil)
		req.SetVersion(v)
		got := roundTrip(t, req).(*kmsg.LeaderAndISRRequest)
		if len(got.PartitionStates)+len(got.TopicStates) != 1 {
			t.Fatalf("LeaderAndIsr v%d lost its partitions: %+v", v, got)
		}
	}
	uparts := []umPartition{{tp: kafka.TopicPartition{Topic: "a", Partition: 0}, state: LeaderAndIsr{Leader: 1, Isr: []int32{1}}, replicas: []int32{1}}}
	for v := int16(0); v <= DefaultUpdateMetadataVersion; v++ {
		req := buildUpdateMetadata(DefaultUpdateMetadataVersion, testHeader, uparts, nil)
		req.SetVersion(v)
		got := roundTrip(t, req).(*kmsg.UpdateMetadataRequest)
		if len(got.PartitionStates)+len(got.TopicStates) != 1 {
			t.Fatalf("UpdateMetadata v%d lost its partitions: %+v", v, got)
		}
	}
}
