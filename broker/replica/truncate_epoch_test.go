package replica

import (
	"context"
	"testing"
	"time"

	"samsa/broker/record"
)

// TestReplicaTruncationKIP279: the leader answers OffsetsForLeaderEpoch
// with an older epoch than the one asked (it never had the follower's
// latest epoch). The follower truncates to its own end of that epoch when
// it is smaller than the leader's, and to the end of its largest epoch
// below it when it does not have the leader's epoch at all.
func TestReplicaTruncationKIP279(t *testing.T) {
	for _, tc := range []struct {
		name        string
		leaderEpoch int32 // epoch in the leader's answer
		leaderEnd   int64 // end offset in the leader's answer
		want        int64
	}{
		{"common epoch ends earlier here", 5, 3, 2},
		{"common epoch ends earlier on the leader", 5, 1, 1},
		{"leader's epoch unknown here", 6, 4, 2},
		{"latest epoch", 8, 10, 4},
		{"undefined: high watermark", -1, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newTestManager(t, 1, 1)
			res, err := m.BecomeLeaderOrFollower(context.Background(), LeaderAndIsr{ControllerEpoch: 1,
				Partitions: []PartitionState{{TopicPartition: tp0, Leader: 2, LeaderEpoch: 9, ISR: []int32{2, 1}, Replicas: []int32{2, 1}}}})
			if err != nil || res[tp0] != nil {
				t.Fatal(err, res)
			}
			p := m.Partition(tp0)
			// Local log: offsets 0-1 in epoch 5, 2 in epoch 7, 3 in epoch 8.
			for off, epoch := range []int32{5, 5, 7, 8} {
				h := record.NewBuildHeader(int64(off), time.Now().UnixMilli())
				h.PartitionLeaderEpoch = epoch
				b, err := record.Build(h, []record.Record{{Value: []byte("v")}}, record.CodecNone)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := p.Log().AppendAsFollower(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.truncateForFollower(9, EpochEndOffset{LeaderEpoch: tc.leaderEpoch, EndOffset: tc.leaderEnd}); err != nil {
				t.Fatal(err)
			}
			if leo := p.Log().LogEndOffset(); leo != tc.want {
				t.Fatalf("log end %d after truncation, want %d", leo, tc.want)
			}
		})
	}
}
