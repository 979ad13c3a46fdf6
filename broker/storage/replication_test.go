package storage

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// A follower that copies the leader through Read and AppendAsFollower,
// truncating itself now and then, ends byte-for-byte equal to the leader
// with the same leader-epoch answers (the replica fetcher's contract).
func TestStorageFollowerReplicatesLeader(t *testing.T) {
	for _, seed := range []uint64{1, 7, 99} {
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(seed, 3))
		clock := newFakeClock()
		quiet := func(o *LogOptions) { o.Logger = nil }
		leader := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), smallConfig(), clock, quiet)
		follower := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), smallConfig(), clock, quiet)
		epoch := int32(0)
		for i := 0; i < 300; i++ {
			switch r := rng.IntN(10); {
			case r < 5:
				if rng.IntN(20) == 0 {
					epoch++
				}
				if _, err := leader.AppendAsLeader(testBatch(t, 1+rng.IntN(5), rng.IntN(400), clock.Now().UnixMilli()), epoch); err != nil {
					t.Fatal(err)
				}
			case r < 9:
				fetchInto(t, leader, follower, rng.IntN(5000))
			default:
				if leo := follower.LogEndOffset(); leo > 0 {
					// Truncate to an epoch boundary, as a follower does after
					// OffsetsForLeaderEpoch.
					_, end := leader.EndOffsetForEpoch(int32(rng.IntN(int(epoch) + 1)))
					if end >= 0 && end < leo {
						if err := follower.TruncateTo(end); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
		for i := 0; i < 1000 && follower.LogEndOffset() < leader.LogEndOffset(); i++ {
			fetchInto(t, leader, follower, 1<<20)
		}
		if follower.LogEndOffset() != leader.LogEndOffset() {
			t.Fatalf("follower at %d, leader at %d", follower.LogEndOffset(), leader.LogEndOffset())
		}
		lb := readBatches(t, leader, 0, leader.LogEndOffset())
		fb := readBatches(t, follower, 0, follower.LogEndOffset())
		if len(lb) != len(fb) {
			t.Fatalf("%d batches on the leader, %d on the follower", len(lb), len(fb))
		}
		for i := range lb {
			if !bytes.Equal(lb[i], fb[i]) {
				t.Fatalf("batch %d differs", i)
			}
		}
		for e := int32(0); e <= epoch+1; e++ {
			le, lo := leader.EndOffsetForEpoch(e)
			fe, fo := follower.EndOffsetForEpoch(e)
			if le != fe || lo != fo {
				t.Fatalf("EndOffsetForEpoch(%d): leader %d/%d, follower %d/%d", e, le, lo, fe, fo)
			}
		}
		leader.Close()
		follower.Close()
	}
}

// fetchInto copies up to maxBytes (at least one batch) from leader to
// follower, starting at the follower's log end offset.
func fetchInto(t *testing.T, leader, follower *Log, maxBytes int) {
	t.Helper()
	res, err := leader.Read(follower.LogEndOffset(), maxBytes, leader.LogEndOffset(), true)
	if err != nil {
		t.Fatalf("fetch at %d: %v", follower.LogEndOffset(), err)
	}
	if res.Size() == 0 {
		return
	}
	var buf bytes.Buffer
	if _, err := res.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := follower.AppendAsFollower(buf.Bytes()); err != nil {
		t.Fatalf("follower append at %d: %v", follower.LogEndOffset(), err)
	}
}
