package fetchsession

import (
	"sync/atomic"
	"testing"
)

// BenchmarkFetchSessionChanged is the fetch session cache's share of every
// append (the fetch purgatory's Notify calls Cache.Changed): a partition no
// session holds (a producer-only partition), and one held by a session of
// 1,000 partitions (a follower's, or a consumer's), the partition already
// marked (appends faster than the session fetches) or not. parallel: every
// core notifying its own partition of the one session at once, as
// producers on several connections do.
func BenchmarkFetchSessionChanged(b *testing.B) {
	c := NewCache(Config{Slots: 10})
	x := c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 1000, 0)})
	resps := make([]PartitionResponse, len(x.Partitions()))
	id := x.Finish(resps, make([]bool, len(resps)))
	if id == InvalidSessionID {
		b.Fatal("no session")
	}
	sess := c.mu.sessions[id]
	epoch := int32(1)
	take := func() { // a changed-only fetch taking the dirty list
		c.NewContext(Request{SessionID: id, Epoch: epoch, ChangedOnly: true})
		epoch = NextEpoch(epoch)
	}
	take()
	b.Run("unheld", func(b *testing.B) {
		tp := tpOf(5000)
		for b.Loop() {
			c.Changed(tp)
		}
	})
	b.Run("held-marked", func(b *testing.B) {
		tp := tpOf(7)
		for b.Loop() {
			c.Changed(tp)
		}
	})
	b.Run("held-unmarked", func(b *testing.B) {
		tp := tpOf(7)
		for b.Loop() {
			c.Changed(tp)
			b.StopTimer()
			take()
			<-sess.wake // what the parked fetch takes
			b.StartTimer()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var next atomic.Int32
		b.RunParallel(func(pb *testing.PB) {
			tp := tpOf(next.Add(1) % 1000)
			for pb.Next() {
				c.Changed(tp)
			}
		})
	})
}
