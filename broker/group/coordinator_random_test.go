package group

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/internal/testwait"
)

// simMember is a simulated client: at most one call in flight, like a
// client with one connection to its coordinator, and usually the next
// call a real client would make (sync after join, rejoin on
// REBALANCE_IN_PROGRESS), sometimes a random one.
type simMember struct {
	client   string
	instance string
	id       string
	gen      int32
	next     int           // the op a real client would send next; -1 none
	inFlight <-chan func() // applies the answer to the member
}

// TestGroupRandomOperations drives a group with random joins, syncs,
// heartbeats, leaves, commits and clock jumps from several members, with
// the bookkeeping invariants checked after every event (race builds). Every
// call must be answered, with no UNKNOWN_SERVER_ERROR, and Shutdown must
// answer whatever still waits.
func TestGroupRandomOperations(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxSize = 4
			e := newEnv(t, cfg)
			rng := rand.New(rand.NewSource(seed))
			const g = "random"
			synced := 0
			members := make([]*simMember, 6)
			for i := range members {
				members[i] = &simMember{client: fmt.Sprintf("c%d", i), next: -1}
				if i%3 == 0 {
					members[i].instance = fmt.Sprintf("inst%d", i)
				}
			}
			check := func(code int16) {
				if code == kerr.UnknownServerError.Code {
					t.Fatalf("UNKNOWN_SERVER_ERROR")
				}
			}
			// start runs one call in the background and waits until it has
			// been answered or handed to the group, so that later clock
			// jumps cannot overtake it.
			start := func(m *simMember, f func() func()) {
				ch := make(chan func(), 1)
				before := e.c.queued.Load()
				go func() { ch <- f() }()
				m.inFlight = ch
				testwait.For(t, 10*time.Second, func() error {
					if len(ch) == 1 || e.c.queued.Load() > before {
						return nil
					}
					return errors.New("call not handed over yet")
				})
			}
			for step := 0; step < 600; step++ {
				m := members[rng.Intn(len(members))]
				if m.inFlight != nil {
					select {
					case apply := <-m.inFlight:
						apply()
						m.inFlight = nil
					default:
						if rng.Intn(2) == 0 {
							e.advance(time.Duration(rng.Intn(3000))*time.Millisecond, g)
						}
						continue
					}
				}
				id, gen := m.id, m.gen
				op := rng.Intn(10)
				if m.next >= 0 && rng.Intn(20) > 0 {
					op = m.next // usually behave like a client
				}
				m.next = -1
				switch {
				case op < 3:
					req := consumerJoin(g, id, m.client)
					req.GroupInstanceID = m.instance
					req.RequireKnownMember = rng.Intn(2) == 0
					start(m, func() func() {
						r := e.c.JoinGroup(bg, req)
						return func() {
							check(r.ErrorCode)
							switch r.ErrorCode {
							case 0:
								m.id, m.gen, m.next = r.MemberID, r.Generation, 3 // sync
							case kerr.MemberIDRequired.Code:
								m.id, m.next = r.MemberID, 0 // join again
							case kerr.UnknownMemberID.Code, kerr.FencedInstanceID.Code:
								m.id = ""
							}
						}
					})
				case op < 5:
					req := SyncRequest{Group: g, Generation: gen, MemberID: id, GroupInstanceID: m.instance,
						Assignments: map[string][]byte{id: {1}}}
					start(m, func() func() {
						r := e.c.SyncGroup(bg, req)
						return func() {
							check(r.ErrorCode)
							switch r.ErrorCode {
							case 0:
								synced++
								m.next = 5 // heartbeat
							case kerr.RebalanceInProgress.Code, kerr.IllegalGeneration.Code:
								m.next = 0
							}
						}
					})
				case op < 7:
					code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: id, GroupInstanceID: m.instance})
					check(code)
					if code == kerr.RebalanceInProgress.Code || code == kerr.IllegalGeneration.Code {
						m.next = 0
					} else if code == 0 {
						m.next = 5 // keep heartbeating
					}
				case op < 8:
					_, codes := e.c.LeaveGroup(bg, g, []LeaveMember{{MemberID: id, GroupInstanceID: m.instance}})
					for _, c := range codes {
						check(c)
					}
					m.id = ""
				case op < 9:
					codes := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: gen, MemberID: id, GroupInstanceID: m.instance,
						RetentionMs: -1, Offsets: []CommitOffset{commit(int64(step), "t1", 0)}})
					check(codes[0])
				default:
					e.advance(time.Duration(rng.Intn(12000))*time.Millisecond, g)
				}
			}
			// With no more client activity, every parked call must be
			// answered once rebalance and session timeouts have passed.
			for i := 0; i < 20; i++ {
				e.advance(10*time.Second, g)
			}
			for i, m := range members {
				if m.inFlight == nil {
					continue
				}
				select {
				case apply := <-m.inFlight:
					apply()
					m.inFlight = nil
				case <-time.After(5 * time.Second):
					t.Fatalf("member %d: call still parked after 200s of clock without activity", i)
				}
			}
			if synced == 0 {
				t.Errorf("no SyncGroup succeeded")
			}
			e.c.Shutdown()
			for _, m := range members {
				if m.inFlight != nil {
					recv(t, m.inFlight)()
				}
			}
		})
	}
}
