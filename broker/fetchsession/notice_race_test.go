package fetchsession

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// TestFetchSessionNoticeRace: changes made and notified in the replica
// package's order (the new state is stored, then Changed runs) while the
// session's changed-only fetches run (NewContext, a read of the examined
// partitions, sometimes Grow and a second read, Finish) are never lost: once
// the last notice has returned, the next fetch answers every partition's
// final state, with the sweep off. A lost wakeup (a mark taken between the
// read and Finish, or cleared after a notice) leaves a partition's answer
// at an older state.
func TestFetchSessionNoticeRace(t *testing.T) {
	const parts, changes = 4, 3000
	c := NewCache(Config{Slots: 2, SweepEvery: -1})
	var hw [parts]atomic.Int64
	// told is what the session's client was last answered, per partition.
	told := map[int32]int64{}
	read := func(x *Context) []PartitionResponse {
		out := make([]PartitionResponse, len(x.Partitions()))
		for i, e := range x.Partitions() {
			out[i] = PartitionResponse{HighWatermark: hw[e.TP.Partition].Load()}
		}
		return out
	}
	finish := func(x *Context, resps []PartitionResponse) int32 {
		include := make([]bool, len(resps))
		id := x.Finish(resps, include)
		for i, e := range x.Partitions() {
			if include[i] {
				told[e.TP.Partition] = resps[i].HighWatermark
			}
		}
		return id
	}
	full := c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", parts, 0)})
	id := finish(full, read(full))
	epoch := int32(1)
	fetch := func() {
		x := c.NewContext(Request{SessionID: id, Epoch: epoch, ChangedOnly: true})
		epoch = NextEpoch(epoch)
		if x.Kind != Incremental {
			t.Fatalf("kind %v", x.Kind)
		}
		resps := read(x)
		if rand.IntN(2) == 0 && x.Grow() {
			resps = read(x) // the handler reads the grown set again
		}
		finish(x, resps)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= changes; i++ {
			p := int32(rand.IntN(parts))
			hw[p].Store(int64(i))
			c.Changed(tpOf(p))
		}
	}()
	fetches := 0
	for running := true; running; fetches++ {
		select {
		case <-done:
			running = false
		default:
			fetch()
		}
	}
	fetch()
	for p := range int32(parts) {
		if got, want := told[p], hw[p].Load(); got != want {
			t.Fatalf("partition %d: the fetch after the last notice answered high watermark %d, want %d (after %d fetches)",
				p, got, want, fetches)
		}
	}
}
