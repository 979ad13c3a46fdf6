package fetchsession

import (
	"testing"

	"samsa/kafka"
)

func tpOf(p int32) kafka.TopicPartition { return kafka.TopicPartition{Topic: "t", Partition: p} }

// names returns the partition numbers of x's partitions, in order.
func names(x *Context) []int32 {
	var out []int32
	for _, e := range x.Partitions() {
		out = append(out, e.TP.Partition)
	}
	return out
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFetchSessionChangedOnly: a changed-only incremental context names
// only the partitions marked by Changed, named by the request or left hot
// by the last answer, in session order; the first one after the full fetch
// names all; Grow picks up changes made while the fetch waits, and Wake
// signals them.
func TestFetchSessionChangedOnly(t *testing.T) {
	c, _ := newTestCache(10)
	_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 4, 0)}), 5)
	inc := func(epoch int32, parts ...Entry) *Context {
		x := c.NewContext(Request{SessionID: id, Epoch: epoch, ChangedOnly: true, Partitions: parts})
		if x.Kind != Incremental {
			t.Fatalf("epoch %d: kind %v", epoch, x.Kind)
		}
		return x
	}
	// A change before the session existed reached nobody: the first
	// incremental fetch examines everything.
	x := inc(1)
	if got := names(x); !equal(got, []int32{0, 1, 2, 3}) {
		t.Fatalf("first incremental examines %v, want all", got)
	}
	answer(t, x, 5)
	// Idle: nothing to examine.
	x = inc(2)
	if got := names(x); len(got) != 0 {
		t.Fatalf("idle fetch examines %v", got)
	}
	// A change while the fetch waits: Wake fires, Grow adds it.
	c.Changed(tpOf(2))
	c.Changed(tpOf(9)) // not in the session: ignored
	select {
	case <-x.Wake():
	default:
		t.Fatal("Changed did not wake the session")
	}
	if !x.Grow() || !equal(names(x), []int32{2}) {
		t.Fatalf("after Changed(2): %v", names(x))
	}
	if x.Grow() {
		t.Fatal("Grow with nothing new")
	}
	// A partition already examined that changes again is read again
	// (Grow reports it although the set does not grow).
	c.Changed(tpOf(2))
	if !x.Grow() || !equal(names(x), []int32{2}) {
		t.Fatalf("after a second Changed(2): grow false or %v", names(x))
	}
	// Partition 2 is sent with records: it moves to the end and is
	// examined again next time (the client's offset moves).
	if got, _ := answer(t, x, 6, 0); !equal(toInt32(got), []int32{0}) {
		t.Fatalf("sent %v", got)
	}
	x = inc(3, Entry{TP: tpOf(0), Req: PartitionRequest{FetchOffset: 1}})
	if got := names(x); !equal(got, []int32{0, 2}) {
		t.Fatalf("after a send and a named partition: %v, want [0 2]", got)
	}
	// Hot (records it could not send) is examined again; cold is not.
	resps := []PartitionResponse{{HighWatermark: 5}, {HighWatermark: 6, Hot: true}}
	x.Finish(resps, make([]bool, 2))
	if got := names(inc(4)); !equal(got, []int32{2}) {
		t.Fatalf("after a hot answer: %v, want [2]", got)
	}
	// Session order: 2 was sent last, so it comes after 3 once both change.
	c.Changed(tpOf(3))
	c.Changed(tpOf(2))
	if got := names(inc(5)); !equal(got, []int32{3, 2}) {
		t.Fatalf("order %v, want [3 2]", got)
	}
	// ChangedAll marks everything; a forgotten partition is never named.
	c.ChangedAll()
	x = c.NewContext(Request{SessionID: id, Epoch: 6, ChangedOnly: true, Forgotten: []kafka.TopicPartition{tpOf(1)}})
	if got := names(x); !equal(got, []int32{0, 3, 2}) {
		t.Fatalf("after ChangedAll and forgetting 1: %v", got)
	}
}

func toInt32(in []int) []int32 {
	out := make([]int32, len(in))
	for i, v := range in {
		out[i] = int32(v)
	}
	return out
}
