package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// TestControllerControlledShutdown follows reference §3.11: "the ones it leads → Online with
// the ControlledShutdown strategy; for the ones it follows → StopReplica (delete=false) and
// OfflineReplica (removed from the ISR). Reply with the partitions it still leads."
func TestControllerControlledShutdown(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	n3 := cl.startNode(3, nil)
	z2, admin := cl.zk(), cl.zk()
	reg := zkutil.BrokerRegistration{ID: 2, Version: 4, JMXPort: -1,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: brokerPort(2)}}}
	epoch2, err := z2.RegisterBroker(reg)
	if err != nil {
		t.Fatal(err)
	}
	// Both must be live when the topic arrives (see TestControllerBouncedBroker).
	waitBrokerKnown(t, cl, 2)
	waitBrokerKnown(t, cl, 3)
	createTopic(t, admin, "cs", map[int32][]int32{0: {2, 3}, 1: {3, 2}, 2: {2}, 3: {2, 4}})
	wantState(t, admin, "cs", 0, 2, []int32{2, 3}, 0)
	wantState(t, admin, "cs", 1, 3, []int32{3, 2}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	if _, err := n3.c.ControlledShutdown(ctx, 2, epoch2); !errors.Is(err, ErrNotController) {
		t.Fatalf("non-controller: %v", err)
	}
	if _, err := n1.c.ControlledShutdown(ctx, 9, -1); !errors.Is(err, ErrBrokerNotAvailable) {
		t.Fatalf("unknown broker: %v", err)
	}
	if _, err := n1.c.ControlledShutdown(ctx, 2, epoch2-1); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	remaining, err := n1.c.ControlledShutdown(ctx, 2, epoch2)
	if err != nil {
		t.Fatal(err)
	}
	// cs-3's other replica (broker 4) never started, so no leader can take over; cs-2 has a
	// single replica and is not counted ("partitions with RF > 1").
	if want := []kafka.TopicPartition{{Topic: "cs", Partition: 3}}; !slices.Equal(remaining, want) {
		t.Fatalf("remaining %v, want %v", remaining, want)
	}
	wantState(t, admin, "cs", 0, 3, []int32{3}, 1)
	wantState(t, admin, "cs", 1, 3, []int32{3}, 1)
	wantState(t, admin, "cs", 2, 2, []int32{2}, 0)
	testwait.For(t, waitTimeout, func() error {
		got := leaderAndIsrFor(cl.rec, 2, "cs", 0)
		if len(got) == 0 || got[len(got)-1].Leader != 3 {
			return fmt.Errorf("broker 2 was not told it follows cs-0: %+v", got)
		}
		deletes, _ := stopReplicaFor(cl.rec, 2, "cs", 1)
		if len(deletes) == 0 || deletes[0] {
			return fmt.Errorf("broker 2 StopReplica for cs-1: %v", deletes)
		}
		return nil
	})
	// A shutting-down broker does not lead new partitions.
	createTopic(t, admin, "after", map[int32][]int32{0: {2, 3}})
	wantState(t, admin, "after", 0, 3, []int32{3}, 0)

	// Once it is gone and back, it is an ordinary live broker again.
	z2.Close()
	testwait.For(t, waitTimeout, func() error {
		var shutting int
		if err := n1.c.sync(ctx, func() { shutting = len(n1.c.cc.shuttingDown) }); err != nil {
			return err
		}
		if shutting != 0 {
			return fmt.Errorf("%d brokers shutting down", shutting)
		}
		return nil
	})
}

// stateWriteLog is a Store that records the partitions of every UpdatePartitionStates call
// (each one round of pipelined fenced multis), and runs before, when set, just before a call.
type stateWriteLog struct {
	Store
	mu     sync.Mutex
	calls  [][]kafka.TopicPartition
	before func(states map[kafka.TopicPartition]LeaderAndIsr)
}

func (s *stateWriteLog) UpdatePartitionStates(epochZkVersion int32, states map[kafka.TopicPartition]LeaderAndIsr) (map[kafka.TopicPartition]StoreResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, slices.SortedFunc(maps.Keys(states), kafka.ComparePartitions))
	before := s.before
	s.mu.Unlock()
	if before != nil {
		before(states)
	}
	return s.Store.UpdatePartitionStates(epochZkVersion, states)
}

// since returns the calls recorded after the first n.
func (s *stateWriteLog) since(n int) [][]kafka.TopicPartition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls[n:])
}

func (s *stateWriteLog) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// shutdownSetUp starts controller 1 (its Store wrapped in the returned log) and registers
// brokers 2 and 3, then creates topic "one": one-0 {2,3,1} and one-3 {2,1} led by broker 2,
// one-1 {3,2,1} and one-2 {1,2,3} followed by it, every ISR full.
func shutdownSetUp(t *testing.T) (*cluster, *node, *zkutil.Client, *stateWriteLog) {
	t.Helper()
	writes := &stateWriteLog{}
	cl, n1 := newActiveCluster(t, func(cfg *Config) {
		writes.Store = StoreFromZK(cfg.ZK)
		cfg.Store = writes
	})
	cl.registerBroker(cl.zk(), 2, "")
	cl.registerBroker(cl.zk(), 3, "")
	waitBrokerKnown(t, cl, 2)
	waitBrokerKnown(t, cl, 3)
	admin := cl.zk()
	assignment := map[int32][]int32{0: {2, 3, 1}, 1: {3, 2, 1}, 2: {1, 2, 3}, 3: {2, 1}}
	createTopic(t, admin, "one", assignment)
	for p, replicas := range assignment {
		wantState(t, admin, "one", p, replicas[0], replicas, 0)
	}
	return cl, n1, admin, writes
}

// shutdownBroker2 sends broker 2's ControlledShutdown to controller n1 and fails the test
// unless it leaves broker 2 leading nothing.
func shutdownBroker2(t *testing.T, n1 *node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	remaining, err := n1.c.ControlledShutdown(ctx, 2, -1)
	if err != nil || len(remaining) != 0 {
		t.Fatalf("controlled shutdown: remaining %v, %v", remaining, err)
	}
}

// wantShutdownRequests checks what the brokers were told about topic one after broker 2's
// controlled shutdown: broker 2 that it follows one-0 and one-3 (LeaderAndIsr), before
// StopReplica (delete=false, new leader epoch 1) for one-1 and one-2; the followed
// partitions' other replicas their shrunk ISR (isr1 for one-1).
func wantShutdownRequests(t *testing.T, rec *recorder, isr1 []int32) {
	t.Helper()
	testwait.For(t, waitTimeout, func() error {
		for p, leader := range map[int32]int32{0: 3, 3: 1} {
			got := leaderAndIsrFor(rec, 2, "one", p)
			if len(got) == 0 || got[len(got)-1].Leader != leader {
				return fmt.Errorf("broker 2 was not told it follows one-%d: %+v", p, got)
			}
		}
		for _, p := range []int32{1, 2} {
			deletes, epochs := stopReplicaFor(rec, 2, "one", p)
			if len(deletes) != 1 || deletes[0] || epochs[0] != 1 {
				return fmt.Errorf("broker 2 StopReplica for one-%d: delete %v epochs %v", p, deletes, epochs)
			}
		}
		for _, want := range []struct {
			broker, p int32
			isr       []int32
		}{{3, 1, isr1}, {1, 1, isr1}, {1, 2, []int32{1, 3}}, {3, 2, []int32{1, 3}}} {
			got := leaderAndIsrFor(rec, want.broker, "one", want.p)
			if len(got) == 0 || !slices.Equal(got[len(got)-1].ISR, want.isr) {
				return fmt.Errorf("broker %d LeaderAndIsr for one-%d: %+v, want ISR %v", want.broker, want.p, got, want.isr)
			}
		}
		return nil
	})
	electedOne0 := func(r kmsg.Request) bool {
		for _, ts := range r.(*kmsg.LeaderAndISRRequest).TopicStates {
			for _, ps := range ts.PartitionStates {
				if ts.Topic == "one" && ps.Partition == 0 && ps.Leader == 3 {
					return true
				}
			}
		}
		return false
	}
	lai, stop := rec.firstIndex(2, 4, electedOne0), rec.firstIndex(2, 5, func(kmsg.Request) bool { return true })
	if lai < 0 || stop < lai {
		t.Fatalf("broker 2: StopReplica (request %d) before the LeaderAndIsr of its elections (request %d)", stop, lai)
	}
}

// TestControllerControlledShutdownOneWriteRound: the elections of the partitions the
// shutting-down broker leads and the ISR shrinks of those it follows are written in one
// UpdatePartitionStates (one round of pipelined fenced multis), where Kafka 2.8 (and Samsa
// before) wrote the elections, then the shrinks; every broker hears what Kafka's two steps
// tell it.
func TestControllerControlledShutdownOneWriteRound(t *testing.T) {
	t.Parallel()
	cl, n1, admin, writes := shutdownSetUp(t)
	before := writes.count()
	shutdownBroker2(t, n1)
	all := []kafka.TopicPartition{{Topic: "one", Partition: 0}, {Topic: "one", Partition: 1}, {Topic: "one", Partition: 2}, {Topic: "one", Partition: 3}}
	if got := writes.since(before); len(got) != 1 || !slices.Equal(got[0], all) {
		t.Fatalf("state write rounds %v, want one writing %v", got, all)
	}
	wantState(t, admin, "one", 0, 3, []int32{3, 1}, 1)
	wantState(t, admin, "one", 1, 3, []int32{3, 1}, 1)
	wantState(t, admin, "one", 2, 1, []int32{1, 3}, 1)
	wantState(t, admin, "one", 3, 1, []int32{1}, 1)
	wantShutdownRequests(t, cl.rec, []int32{3, 1})
}

// TestControllerControlledShutdownFollowedConflict: one-1's leader shrinks its ISR to [3 2]
// between the controller's decision (on its cached [3 2 1]) and the shared write round; that
// write fails its zkVersion check while the others land, and a second round writes only
// one-1, decided again on the state read back: ISR [3], not the [3 1] of the cached state.
func TestControllerControlledShutdownFollowedConflict(t *testing.T) {
	t.Parallel()
	cl, n1, admin, writes := shutdownSetUp(t)
	one1 := kafka.TopicPartition{Topic: "one", Partition: 1}
	var once sync.Once
	var interposed error
	writes.mu.Lock()
	writes.before = func(states map[kafka.TopicPartition]LeaderAndIsr) {
		if _, ok := states[one1]; ok {
			once.Do(func() {
				interposed = leaderWrite(admin, one1, zkutil.PartitionState{Leader: 3, ISR: []int32{3, 2}, ControllerEpoch: 1})
			})
		}
	}
	writes.mu.Unlock()
	before := writes.count()
	shutdownBroker2(t, n1)
	if interposed != nil {
		t.Fatal(interposed)
	}
	got := writes.since(before)
	if len(got) != 2 || len(got[0]) != 4 || !slices.Equal(got[1], []kafka.TopicPartition{one1}) {
		t.Fatalf("state write rounds %v, want all four partitions, then one-1 alone", got)
	}
	wantState(t, admin, "one", 0, 3, []int32{3, 1}, 1)
	wantState(t, admin, "one", 1, 3, []int32{3}, 1)
	wantState(t, admin, "one", 2, 1, []int32{1, 3}, 1)
	wantState(t, admin, "one", 3, 1, []int32{1}, 1)
	wantShutdownRequests(t, cl.rec, []int32{3})
}

// TestControllerDebugLinesFollowLevel: the per-partition DEBUG lines (here a replica state
// transition) are written when the logger's level is DEBUG and not built at INFO, where the
// state still changes.
func TestControllerDebugLinesFollowLevel(t *testing.T) {
	t.Parallel()
	logger, hook := test.NewNullLogger()
	c := &Controller{log: logger.WithField("component", "controller"), cc: newControllerContext(1, 1)}
	r := PartitionReplica{kafka.TopicPartition{Topic: "d", Partition: 0}, 1}
	for _, tc := range []struct {
		level logrus.Level
		to    ReplicaState
		lines int
	}{{logrus.InfoLevel, OnlineReplica, 0}, {logrus.DebugLevel, OfflineReplica, 1}} {
		logger.SetLevel(tc.level)
		hook.Reset()
		c.setReplicaState(r, tc.to)
		if c.cc.replicaStates[r] != tc.to || len(hook.AllEntries()) != tc.lines {
			t.Fatalf("at %v: state %v, %d log lines; want %v, %d", tc.level, c.cc.replicaStates[r], len(hook.AllEntries()), tc.to, tc.lines)
		}
	}
}
