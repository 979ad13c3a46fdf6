package fetchsession

import (
	"testing"
	"time"

	"samsa/kafka"
)

// FuzzFetchSession drives the cache with request sequences decoded from
// the input (session ids, epochs, partitions, forgotten partitions and
// answers, as a client on the network chooses them) and checks that it
// never panics, never holds more than its slots, keeps its partition
// count equal to the sum of its sessions' sizes and its change index and
// dirty lists consistent with its sessions, and that an Incremental
// context names every partition of its session (a changed-only one, a
// subset).
func FuzzFetchSession(f *testing.F) {
	f.Add([]byte{0, 0, 3, 1, 1, 0, 2, 1, 2, 0})
	f.Add([]byte{0, 0, 5, 0, 7, 1, 1, 1, 1, 255, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		ck := &clock{t: time.Unix(1_700_000_000, 0)}
		next := int32(0)
		c := NewCache(Config{Slots: 3, Now: ck.now, NewID: func() int32 { next++; return next%5 + 1 }})
		var ids []int32
		byte0 := func() byte {
			if len(in) == 0 {
				return 0
			}
			b := in[0]
			in = in[1:]
			return b
		}
		for steps := 0; len(in) > 0 && steps < 200; steps++ {
			op := byte0()
			req := Request{Follower: op&1 == 1, ChangedOnly: op&16 == 0}
			switch op >> 1 % 4 {
			case 0: // full
				req.Epoch = int32(byte0()%2) - 1 // -1 or 0
			default: // incremental on a known or random id
				if len(ids) > 0 && op&8 == 0 {
					req.SessionID = ids[int(byte0())%len(ids)]
				} else {
					req.SessionID = int32(byte0())
				}
				req.Epoch = int32(byte0() % 8)
			}
			for n := int(byte0() % 6); n > 0; n-- {
				req.Partitions = append(req.Partitions, Entry{TP: kafka.TopicPartition{Topic: string(rune('a' + byte0()%3)), Partition: int32(byte0() % 4)},
					Req: PartitionRequest{FetchOffset: int64(byte0())}})
			}
			for n := int(byte0() % 3); n > 0; n-- {
				req.Forgotten = append(req.Forgotten, kafka.TopicPartition{Topic: string(rune('a' + byte0()%3)), Partition: int32(byte0() % 4)})
			}
			if b := byte0(); b%4 == 0 {
				c.Changed(kafka.TopicPartition{Topic: string(rune('a' + b/4%3)), Partition: int32(b / 16 % 4)})
			} else if b == 255 {
				c.ChangedAll()
			}
			x := c.NewContext(req)
			if x.Kind == Incremental && req.ChangedOnly {
				if n, _ := c.SessionSize(x.sess.id); len(x.Partitions()) > n {
					t.Fatalf("changed-only context names %d partitions, session holds %d", len(x.Partitions()), n)
				}
			} else if x.Kind == Incremental {
				if n, ok := c.SessionSize(x.sess.id); !ok || n != len(x.Partitions()) {
					t.Fatalf("incremental context names %d partitions, session holds %d (%v)", len(x.Partitions()), n, ok)
				}
			}
			resps := make([]PartitionResponse, len(x.Partitions()))
			for i := range resps {
				b := byte0()
				resps[i] = PartitionResponse{HighWatermark: int64(b % 4), HasRecords: b&4 == 0, Hot: b&8 == 0}
			}
			include := make([]bool, len(resps))
			if id := x.Finish(resps, include); id != InvalidSessionID {
				ids = append(ids, id)
			}
			ck.advance(time.Duration(byte0()) * time.Second)
			st := c.Stats()
			if st.Sessions > 3 {
				t.Fatalf("%d sessions in 3 slots", st.Sessions)
			}
			c.mu.Lock()
			sum := 0
			for id, s := range c.mu.sessions {
				s.mu.Lock()
				c.watch.RLock()
				onList := map[*cached]bool{}
				for _, p := range s.mu.dirty {
					onList[p] = true
				}
				for tp, p := range s.mu.parts {
					if _, ok := c.watch.sessions[tp][s]; !ok {
						t.Fatalf("session %d: %v missing from the change index", id, tp)
					}
					if p.dirty && !onList[p] {
						t.Fatalf("session %d: %v dirty but not on the list", id, tp)
					}
				}
				c.watch.RUnlock()
				s.mu.Unlock()
				sum += c.mu.sizes[id]
			}
			if sum != c.mu.partitions {
				t.Fatalf("partition count %d, sessions hold %d", c.mu.partitions, sum)
			}
			c.mu.Unlock()
		}
	})
}
