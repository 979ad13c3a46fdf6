package fetchsession

import (
	"testing"
	"time"
)

// changedOnlyFetches returns a function that makes the next changed-only
// incremental context of session id (epochs 1, 2, ...).
func changedOnlyFetches(t *testing.T, c *Cache, id int32) func() *Context {
	epoch := int32(1)
	return func() *Context {
		t.Helper()
		x := c.NewContext(Request{SessionID: id, Epoch: epoch, ChangedOnly: true})
		epoch++
		if x.Kind != Incremental {
			t.Fatalf("kind %v", x.Kind)
		}
		return x
	}
}

// TestFetchSessionSweep: a changed-only session examines every partition
// once SweepEvery has passed since its last sweep, so a change that no
// notice reported is answered within SweepEvery (Kafka reads everything on
// every fetch); such a partition is counted as unnoticed, a noticed one is
// not, and between sweeps an idle fetch examines nothing.
func TestFetchSessionSweep(t *testing.T) {
	c, ck := newTestCache(10)
	_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 3, 0)}), 5)
	inc := changedOnlyFetches(t, c, id)
	answer(t, inc(), 5) // the first incremental examines all (they start dirty)
	if got := names(inc()); len(got) != 0 {
		t.Fatalf("idle fetch before a sweep is due examines %v", got)
	}
	// Partition 1's high watermark moves to 6 with no Changed call (a
	// missing notice), partition 2's with one. Before SweepEvery only the
	// noticed one is examined.
	c.Changed(tpOf(2))
	x := inc()
	if got := names(x); !equal(got, []int32{2}) {
		t.Fatalf("before the sweep: examines %v, want [2]", got)
	}
	x.Finish([]PartitionResponse{{HighWatermark: 6}}, make([]bool, 1))
	ck.t = ck.t.Add(DefaultSweepEvery)
	x = inc()
	if got := names(x); !equal(got, []int32{0, 1, 2}) {
		t.Fatalf("sweep examines %v, want all", got)
	}
	include := make([]bool, 3)
	x.Finish([]PartitionResponse{{HighWatermark: 5}, {HighWatermark: 6}, {HighWatermark: 6}}, include)
	if include[0] || !include[1] || include[2] {
		t.Fatalf("sweep answered %v, want only partition 1", include)
	}
	// Partition 1 is a suspect until the session's next fetch arrives
	// (unnoticed.go), which counts it.
	if n := c.Stats().Unnoticed; n != 0 {
		t.Fatalf("unnoticed %d before the next fetch, want 0", n)
	}
	// The sweep resets the clock: the next fetch examines only what was
	// sent (partition 1), and the one after it nothing.
	x = inc()
	if got := names(x); !equal(got, []int32{1}) {
		t.Fatalf("after the sweep: examines %v, want [1]", got)
	}
	x.Finish([]PartitionResponse{{HighWatermark: 6}}, make([]bool, 1))
	if n := c.Stats().Unnoticed; n != 1 {
		t.Fatalf("unnoticed %d after the next fetch, want 1", n)
	}
	if got := names(inc()); len(got) != 0 {
		t.Fatalf("idle after the sweep: examines %v", got)
	}
	// A change noticed during a sweep fetch is not counted.
	ck.t = ck.t.Add(DefaultSweepEvery)
	x = inc()
	c.Changed(tpOf(0))
	x.Finish([]PartitionResponse{{HighWatermark: 7}, {HighWatermark: 6}, {HighWatermark: 6}}, make([]bool, 3))
	if n := c.Stats().Unnoticed; n != 1 {
		t.Fatalf("unnoticed %d after a noticed change, want still 1", n)
	}
}

// TestFetchSessionSweepOff: a negative SweepEvery never sweeps.
func TestFetchSessionSweepOff(t *testing.T) {
	ck := &clock{t: time.Unix(1_700_000_000, 0)}
	c := NewCache(Config{Slots: 2, Now: ck.now, SweepEvery: -1})
	_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 2, 0)}), 5)
	answer(t, c.NewContext(Request{SessionID: id, Epoch: 1, ChangedOnly: true}), 5)
	ck.t = ck.t.Add(time.Hour)
	if got := names(c.NewContext(Request{SessionID: id, Epoch: 2, ChangedOnly: true})); len(got) != 0 {
		t.Fatalf("examines %v with sweeps off", got)
	}
}

// TestFetchSessionSweepLateNotice: a change is visible to a read before its
// notice runs (a leader append publishes its log end inside the log and
// notifies once it returns; a follower fetch moves the high watermark
// inside its read). A sweep that answers such a change in between must not
// count it as unnoticed when the notice follows before the session's next
// fetch; one whose notice never comes is counted when that fetch arrives.
// Before, Finish counted both at once (the seed 4 WARN for
// __consumer_offsets-2 fits such a late notice, not a missing one).
func TestFetchSessionSweepLateNotice(t *testing.T) {
	c, ck := newTestCache(10)
	_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 2, 0)}), 5)
	inc := changedOnlyFetches(t, c, id)
	answer(t, inc(), 5)
	ck.advance(DefaultSweepEvery)
	x := inc()
	if got := names(x); !equal(got, []int32{0, 1}) {
		t.Fatalf("sweep examines %v, want all", got)
	}
	// Both partitions' high watermarks moved before the read; partition 0's
	// notice arrives after the answer, partition 1's never.
	include := make([]bool, 2)
	x.Finish([]PartitionResponse{{HighWatermark: 6}, {HighWatermark: 6}}, include)
	if !include[0] || !include[1] {
		t.Fatalf("sweep answered %v, want both", include)
	}
	c.Changed(tpOf(0))
	if st := c.Stats(); st.Unnoticed != 0 || st.Suspects != 2 {
		t.Fatalf("right after the sweep: unnoticed %d, suspects %d; want 0 and 2", st.Unnoticed, st.Suspects)
	}
	// The next fetch's arrival counts partition 1 only.
	x = inc()
	if st := c.Stats(); st.Unnoticed != 1 || st.Suspects != 0 {
		t.Fatalf("at the next fetch: unnoticed %d, suspects %d; want 1 (partition 1 only) and 0", st.Unnoticed, st.Suspects)
	}
	answer(t, x, 6)
	// A notice after that fetch arrived is too late for partition 1's
	// suspect, and counted once, not again on later fetches.
	c.Changed(tpOf(1))
	answer(t, inc(), 6)
	if n := c.Stats().Unnoticed; n != 1 {
		t.Fatalf("unnoticed %d later, want still 1", n)
	}
	// A suspect of a session that is closed is dropped, not counted.
	ck.advance(DefaultSweepEvery)
	answer(t, inc(), 7)
	if n := c.Stats().Suspects; n != 2 {
		t.Fatalf("suspects %d after a second sweep, want 2", n)
	}
	c.NewContext(Request{SessionID: id, Epoch: InitialEpoch, Partitions: entries("t", 2, 0)}) // closes id
	if st := c.Stats(); st.Suspects != 0 || st.Unnoticed != 1 {
		t.Fatalf("after closing the session: suspects %d, unnoticed %d; want 0 and 1", st.Suspects, st.Unnoticed)
	}
}
