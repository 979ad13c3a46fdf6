package fetchsession

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestCache(slots int) (*Cache, *clock) {
	ck := &clock{t: time.Unix(1_700_000_000, 0)}
	next := int32(0)
	return NewCache(Config{Slots: slots, Now: ck.now, NewID: func() int32 { next++; return next }}), ck
}

func entries(topic string, n int, offset int64) []Entry {
	out := make([]Entry, n)
	for i := range out {
		out[i] = Entry{TP: kafka.TopicPartition{Topic: topic, Partition: int32(i)}, Req: PartitionRequest{FetchOffset: offset, MaxBytes: 1 << 20}}
	}
	return out
}

// answer finishes x with every partition at high watermark hw (records
// for the indexes in data) and returns the included indexes and the id.
func answer(t *testing.T, x *Context, hw int64, data ...int) ([]int, int32) {
	t.Helper()
	resps := make([]PartitionResponse, len(x.Partitions()))
	for i := range resps {
		resps[i] = PartitionResponse{HighWatermark: hw, LogStartOffset: 0}
	}
	for _, i := range data {
		resps[i].HasRecords = true
	}
	inc := make([]bool, len(resps))
	id := x.Finish(resps, inc)
	var got []int
	for i, ok := range inc {
		if ok {
			got = append(got, i)
		}
	}
	return got, id
}

func TestFetchSessionFullThenIncremental(t *testing.T) {
	c, _ := newTestCache(10)
	x := c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 3, 0)})
	if x.Kind != Full {
		t.Fatalf("kind %v, want Full", x.Kind)
	}
	got, id := answer(t, x, 5)
	if len(got) != 3 || id == InvalidSessionID {
		t.Fatalf("full answer %v id %d", got, id)
	}
	// Epoch 1, nothing changed: nothing to send.
	x = c.NewContext(Request{SessionID: id, Epoch: 1})
	if x.Kind != Incremental || len(x.Partitions()) != 3 {
		t.Fatalf("kind %v parts %d", x.Kind, len(x.Partitions()))
	}
	if got, id2 := answer(t, x, 5); len(got) != 0 || id2 != id {
		t.Fatalf("unchanged partitions sent: %v (id %d)", got, id2)
	}
	// Epoch 2: the HW moved and partition 1 has data.
	x = c.NewContext(Request{SessionID: id, Epoch: 2})
	resps := []PartitionResponse{{HighWatermark: 5}, {HighWatermark: 6, HasRecords: true}, {HighWatermark: 5}}
	inc := make([]bool, 3)
	x.Finish(resps, inc)
	if inc[0] || !inc[1] || inc[2] {
		t.Fatalf("include %v, want only partition 1", inc)
	}
	// Sent partitions rotate to the end.
	x = c.NewContext(Request{SessionID: id, Epoch: 3})
	if p := x.Partitions(); p[2].TP.Partition != 1 {
		t.Fatalf("order %v, want partition 1 last", p)
	}
	// An error is always sent, and the partition again once it clears.
	resps = []PartitionResponse{{HighWatermark: -1, ErrorCode: kerr.NotLeaderForPartition.Code}, {HighWatermark: 5}, {HighWatermark: 6}}
	x.Finish(resps, inc)
	if !inc[0] {
		t.Fatal("error not sent")
	}
	x = c.NewContext(Request{SessionID: id, Epoch: 4})
	resps = []PartitionResponse{{HighWatermark: -1}, {HighWatermark: 5}, {HighWatermark: 6}}
	x.Finish(resps, inc)
	if !inc[0] {
		t.Fatal("partition not re-sent after its error cleared")
	}
}

func TestFetchSessionErrors(t *testing.T) {
	c, _ := newTestCache(10)
	x := c.NewContext(Request{SessionID: 42, Epoch: 1})
	if x.Kind != Error || x.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: %v %d", x.Kind, x.ErrorCode)
	}
	_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 1, 0)}), 0)
	x = c.NewContext(Request{SessionID: id, Epoch: 7})
	if x.Kind != Error || x.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("wrong epoch: %v %d", x.Kind, x.ErrorCode)
	}
	// The failed request does not move the epoch: 1 is still right.
	if x = c.NewContext(Request{SessionID: id, Epoch: 1}); x.Kind != Incremental {
		t.Fatalf("epoch 1 after an error: %v", x.Kind)
	}
	// Epoch 1 again is a replay: refused.
	if x = c.NewContext(Request{SessionID: id, Epoch: 1}); x.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("replayed epoch: %v %d", x.Kind, x.ErrorCode)
	}
	// Session id 0 with epoch > 0: not found.
	if x = c.NewContext(Request{Epoch: 3}); x.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("id 0 epoch 3: %v %d", x.Kind, x.ErrorCode)
	}
}

func TestFetchSessionCloseAndSessionless(t *testing.T) {
	c, _ := newTestCache(10)
	_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 2, 0)}), 0)
	// A full fetch naming the session with the final epoch closes it and
	// gets no new one.
	x := c.NewContext(Request{SessionID: id, Epoch: FinalEpoch, Partitions: entries("t", 2, 0)})
	if x.Kind != Sessionless {
		t.Fatalf("kind %v", x.Kind)
	}
	if _, nid := answer(t, x, 0); nid != InvalidSessionID {
		t.Fatalf("sessionless answer got session %d", nid)
	}
	if c.NewContext(Request{SessionID: id, Epoch: 1}).ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatal("closed session still cached")
	}
	if s := c.Stats(); s.Sessions != 0 || s.Partitions != 0 {
		t.Fatalf("stats %+v", s)
	}
	// Forgetting every partition removes the session.
	_, id = answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 2, 0)}), 0)
	x = c.NewContext(Request{SessionID: id, Epoch: 1, Forgotten: []kafka.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}})
	if x.Kind != Sessionless || c.Stats().Sessions != 0 {
		t.Fatalf("empty session kept: %v %+v", x.Kind, c.Stats())
	}
	// Forgetting one and adding one.
	_, id = answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 2, 0)}), 0)
	x = c.NewContext(Request{SessionID: id, Epoch: 1, Forgotten: []kafka.TopicPartition{{Topic: "t", Partition: 0}},
		Partitions: []Entry{{TP: kafka.TopicPartition{Topic: "u", Partition: 0}}}})
	if p := x.Partitions(); len(p) != 2 || p[0].TP != (kafka.TopicPartition{Topic: "t", Partition: 1}) || p[1].TP != (kafka.TopicPartition{Topic: "u", Partition: 0}) {
		t.Fatalf("partitions %v", p)
	}
	// The added partition is sent (nothing told yet), the other not.
	got, _ := answer(t, x, 0)
	if len(got) != 1 || got[0] != 1 {
		t.Fatalf("sent %v, want the new partition", got)
	}
}

func TestFetchSessionEviction(t *testing.T) {
	c, ck := newTestCache(2)
	full := func(follower bool, n int) int32 {
		_, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Follower: follower, Partitions: entries("t", n, 0)}), 0)
		return id
	}
	a := full(false, 5)
	b := full(false, 3)
	if a == 0 || b == 0 {
		t.Fatal("no session while slots are free")
	}
	// Full of young sessions: a consumer cannot evict anyone.
	if id := full(false, 100); id != 0 {
		t.Fatalf("young session evicted by a consumer (got %d)", id)
	}
	// A follower evicts the smallest young consumer session.
	f := full(true, 1)
	if f == 0 || c.NewContext(Request{SessionID: b, Epoch: 1}).Kind != Error {
		t.Fatal("follower did not evict the smaller consumer session")
	}
	// Nobody evicts the young follower session; the consumer one goes to
	// another follower, then followers are safe from followers too.
	if f2 := full(true, 1); f2 == 0 {
		t.Fatal("second follower could not evict the consumer session")
	}
	if id := full(true, 50); id != 0 {
		t.Fatal("a young follower session was evicted")
	}
	// After the eviction age without use, the least recently used goes.
	ck.advance(DefaultEvictionAge + time.Second)
	if id := full(false, 1); id == 0 {
		t.Fatal("stale session not evicted")
	}
	if ev := c.Stats().Evictions; ev != 3 {
		t.Fatalf("evictions %d, want 3", ev)
	}
}

func TestFetchSessionEvictionBySize(t *testing.T) {
	c, ck := newTestCache(1)
	_, small := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 2, 0)}), 0)
	ck.advance(DefaultEvictionAge / 2)
	// Keep it used, then let it age past the protection.
	c.NewContext(Request{SessionID: small, Epoch: 1})
	ck.advance(DefaultEvictionAge/2 + time.Second)
	c.NewContext(Request{SessionID: small, Epoch: 2})
	// Old but recently used: a same-size session does not evict it, a
	// bigger one does.
	if _, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("u", 2, 0)}), 0); id != 0 {
		t.Fatal("an equal session evicted an old one")
	}
	if _, id := answer(t, c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("u", 3, 0)}), 0); id == 0 {
		t.Fatal("a bigger session did not evict an old smaller one")
	}
}

func TestFetchSessionNoSlots(t *testing.T) {
	c, _ := newTestCache(0)
	x := c.NewContext(Request{Epoch: InitialEpoch, Partitions: entries("t", 1, 0)})
	if _, id := answer(t, x, 0); x.Kind != Sessionless || id != 0 {
		t.Fatalf("slots 0: kind %v id %d", x.Kind, id)
	}
}

func TestFetchSessionNextEpoch(t *testing.T) {
	for in, want := range map[int32]int32{0: 1, 1: 2, 1<<31 - 1: 1, -1: -1} {
		if got := NextEpoch(in); got != want {
			t.Errorf("NextEpoch(%d) = %d, want %d", in, got, want)
		}
	}
}
