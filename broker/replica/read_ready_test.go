package replica

import (
	"fmt"
	"testing"

	"samsa/kafka"
)

// TestReplicaReadReadyAgreesWithRead: whenever Read would return records or
// an error, ReadReady says so first (it is the fetch purgatory's cheap check,
// so a false answer must never hide data or an error); and it answers false
// for the idle long poll (a consumer at the high watermark, a follower at the
// log end), which is what makes that poll cheap.
func TestReplicaReadReadyAgreesWithRead(t *testing.T) {
	m, _ := newTestManager(t, 1, 1)
	lead(t, m, 1, 4, []int32{1, 2}, []int32{1, 2})
	if _, err := m.AppendAsLeader(tp0, batch(t, "a", "b", "c"), -1); err != nil {
		t.Fatal(err)
	}
	// The follower fetches offset 1: the high watermark is 1, the log end 3.
	if _, err := m.Read(tp0, ReadParams{ReplicaID: 2, FetchOffset: 1, MaxBytes: 1 << 20, CurrentLeaderEpoch: 4, FollowerLogStartOffset: -1}); err != nil {
		t.Fatal(err)
	}
	if st := m.Partition(tp0).State(); st.HighWatermark != 1 {
		t.Fatalf("hw %d", st.HighWatermark)
	}
	unknown := kafka.TopicPartition{Topic: "nope", Partition: 0}
	var cases []ReadParams
	for _, id := range []int32{ConsumerReplicaID, DebuggingReplicaID, 2, 3} {
		for off := int64(-1); off <= 5; off++ {
			for _, epoch := range []int32{-1, 3, 4, 5} {
				for _, rc := range []bool{false, true} {
					cases = append(cases, ReadParams{ReplicaID: id, FetchOffset: off, MaxBytes: 1 << 20,
						CurrentLeaderEpoch: epoch, FollowerLogStartOffset: -1, ReadCommitted: rc, AnyReplica: rc})
				}
			}
		}
	}
	idle := 0
	for _, tp := range []kafka.TopicPartition{tp0, unknown} {
		for _, rp := range cases {
			name := fmt.Sprintf("%s %+v", tp, rp)
			ready := m.ReadReady(tp, rp)
			// Read after ReadReady: a follower read may move the high
			// watermark, which later cases then see in both.
			res, err := m.Read(tp, rp)
			if (err != nil || len(res.Records) > 0) && !ready {
				t.Fatalf("%s: Read gave records %d, err %v, but ReadReady said false", name, len(res.Records), err)
			}
			if !ready {
				idle++
			}
		}
	}
	if idle == 0 {
		t.Fatal("ReadReady never answered false")
	}
	// The idle long polls.
	hw := m.Partition(tp0).State().HighWatermark
	if m.ReadReady(tp0, ReadParams{ReplicaID: ConsumerReplicaID, FetchOffset: hw, CurrentLeaderEpoch: 4}) {
		t.Fatalf("consumer at the high watermark %d: ready", hw)
	}
	if m.ReadReady(tp0, ReadParams{ReplicaID: 2, FetchOffset: 3, CurrentLeaderEpoch: 4}) {
		t.Fatal("follower at the log end: ready")
	}
	if !m.ReadReady(tp0, ReadParams{ReplicaID: 2, FetchOffset: 2, CurrentLeaderEpoch: 4}) {
		t.Fatal("follower behind the log end: not ready")
	}
}
