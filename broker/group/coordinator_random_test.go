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
			sim := &randomSim{t: t, e: newEnv(t, cfg), rng: rand.New(rand.NewSource(seed)), members: make([]*simMember, 6)}
			for i := range sim.members {
				sim.members[i] = &simMember{client: fmt.Sprintf("c%d", i), next: -1}
				if i%3 == 0 {
					sim.members[i].instance = fmt.Sprintf("inst%d", i)
				}
			}
			for step := 0; step < 600; step++ {
				sim.step(step)
			}
			sim.drain()
			if sim.synced == 0 {
				t.Errorf("no SyncGroup succeeded")
			}
			sim.e.c.Shutdown()
			for _, m := range sim.members {
				if m.inFlight != nil {
					recv(t, m.inFlight)()
				}
			}
		})
	}
}

// randomSim is one seed's run of TestGroupRandomOperations on group
// randomGroup.
type randomSim struct {
	t       *testing.T
	e       *env
	rng     *rand.Rand
	members []*simMember
	synced  int // SyncGroup calls answered without error
}

const randomGroup = "random"

func (s *randomSim) check(code int16) {
	if code == kerr.UnknownServerError.Code {
		s.t.Fatalf("UNKNOWN_SERVER_ERROR")
	}
}

// start runs one call in the background and waits until it has been
// answered or handed to the group, so that later clock jumps cannot
// overtake it.
func (s *randomSim) start(m *simMember, f func() func()) {
	ch := make(chan func(), 1)
	before := s.e.c.queued.Load()
	go func() { ch <- f() }()
	m.inFlight = ch
	testwait.For(s.t, 10*time.Second, func() error {
		if len(ch) == 1 || s.e.c.queued.Load() > before {
			return nil
		}
		return errors.New("call not handed over yet")
	})
}

// step picks a member: one with a call in flight applies its answer if
// it has one (else the clock may jump); then it makes its next call,
// usually the one a real client would make.
func (s *randomSim) step(step int) {
	m := s.members[s.rng.Intn(len(s.members))]
	if m.inFlight != nil {
		select {
		case apply := <-m.inFlight:
			apply()
			m.inFlight = nil
		default:
			if s.rng.Intn(2) == 0 {
				s.e.advance(time.Duration(s.rng.Intn(3000))*time.Millisecond, randomGroup)
			}
			return
		}
	}
	op := s.rng.Intn(10)
	if m.next >= 0 && s.rng.Intn(20) > 0 {
		op = m.next // usually behave like a client
	}
	m.next = -1
	s.call(m, op, step)
}

// call makes member m's call op: 0-2 join, 3-4 sync, 5-6 heartbeat, 7
// leave, 8 commit, 9 a clock jump.
func (s *randomSim) call(m *simMember, op, step int) {
	e, g, id, gen := s.e, randomGroup, m.id, m.gen
	switch {
	case op < 3:
		s.join(m)
	case op < 5:
		s.sync(m)
	case op < 7:
		code := e.c.Heartbeat(bg, HeartbeatRequest{Group: g, Generation: gen, MemberID: id, GroupInstanceID: m.instance})
		s.check(code)
		if code == kerr.RebalanceInProgress.Code || code == kerr.IllegalGeneration.Code {
			m.next = 0
		} else if code == 0 {
			m.next = 5 // keep heartbeating
		}
	case op < 8:
		_, codes := e.c.LeaveGroup(bg, g, []LeaveMember{{MemberID: id, GroupInstanceID: m.instance}})
		for _, c := range codes {
			s.check(c)
		}
		m.id = ""
	case op < 9:
		codes := e.c.CommitOffsets(bg, CommitRequest{Group: g, Generation: gen, MemberID: id, GroupInstanceID: m.instance,
			RetentionMs: -1, Offsets: []CommitOffset{commit(int64(step), "t1", 0)}})
		s.check(codes[0])
	default:
		e.advance(time.Duration(s.rng.Intn(12000))*time.Millisecond, g)
	}
}

func (s *randomSim) join(m *simMember) {
	req := consumerJoin(randomGroup, m.id, m.client)
	req.GroupInstanceID = m.instance
	req.RequireKnownMember = s.rng.Intn(2) == 0
	s.start(m, func() func() {
		r := s.e.c.JoinGroup(bg, req)
		return func() {
			s.check(r.ErrorCode)
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
}

func (s *randomSim) sync(m *simMember) {
	id := m.id
	req := SyncRequest{Group: randomGroup, Generation: m.gen, MemberID: id, GroupInstanceID: m.instance,
		Assignments: map[string][]byte{id: {1}}}
	s.start(m, func() func() {
		r := s.e.c.SyncGroup(bg, req)
		return func() {
			s.check(r.ErrorCode)
			switch r.ErrorCode {
			case 0:
				s.synced++
				m.next = 5 // heartbeat
			case kerr.RebalanceInProgress.Code, kerr.IllegalGeneration.Code:
				m.next = 0
			}
		}
	})
}

// drain: with no more client activity, every parked call must be
// answered once rebalance and session timeouts have passed.
func (s *randomSim) drain() {
	for i := 0; i < 20; i++ {
		s.e.advance(10*time.Second, randomGroup)
	}
	for i, m := range s.members {
		if m.inFlight == nil {
			continue
		}
		select {
		case apply := <-m.inFlight:
			apply()
			m.inFlight = nil
		case <-time.After(5 * time.Second):
			s.t.Fatalf("member %d: call still parked after 200s of clock without activity", i)
		}
	}
}
