package fetchsession

import (
	"testing"
	"time"
)

// TestFetchSessionSweep: a changed-only session examines every partition
// once SweepEvery has passed since its last sweep, so a change that no
// notice reported is answered within SweepEvery (Kafka reads everything on
// every fetch); such a partition is counted as unnoticed, a noticed one is
// not, and between sweeps an idle fetch examines nothing.
func TestFetchSessionSweep(t *testing.T) {
	c, ck := newTestCache(10)
	_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 3, 0)}), 5)
	epoch := int32(1)
	inc := func() *Context {
		t.Helper()
		x := c.NewContext(Request{SessionID: id, Epoch: epoch, ChangedOnly: true})
		epoch++
		if x.Kind != Incremental {
			t.Fatalf("kind %v", x.Kind)
		}
		return x
	}
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
	if n := c.Stats().Unnoticed; n != 1 {
		t.Fatalf("unnoticed %d, want 1", n)
	}
	// The sweep resets the clock: the next fetch examines only what was
	// sent (partition 1), and the one after it nothing.
	x = inc()
	if got := names(x); !equal(got, []int32{1}) {
		t.Fatalf("after the sweep: examines %v, want [1]", got)
	}
	x.Finish([]PartitionResponse{{HighWatermark: 6}}, make([]bool, 1))
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
