package controller

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// hintedFailover is the set-up of the failover-order tests: broker 1 is the controller,
// brokers 2 and 3 run controllers too (broker 2's with hint as its LeaderHint and its Store
// changed by wrap, nil for none), topic h has assignment; then broker 1 dies and broker 2
// takes over. It returns the cluster and an admin session.
func hintedFailover(t *testing.T, assignment map[int32][]int32, prepare func(admin *zkutil.Client),
	hint map[kafka.TopicPartition]int32, wrap func(Store) Store) (*cluster, *zkutil.Client) {
	t.Helper()
	cl, n1 := newActiveCluster(t, nil)
	n2 := cl.startNode(2, func(cfg *Config) {
		cfg.LeaderHint = func(tp kafka.TopicPartition) (int32, bool) {
			l, ok := hint[tp]
			return l, ok
		}
		if wrap != nil {
			cfg.Store = wrap(StoreFromZK(cfg.ZK))
		}
	})
	cl.registerBroker(cl.zk(), 3, "")
	waitBrokerKnown(t, cl, 2)
	waitBrokerKnown(t, cl, 3)
	admin := cl.zk()
	createTopic(t, admin, "h", assignment)
	for p, replicas := range assignment {
		wantState(t, admin, "h", p, replicas[0], replicas, 0)
	}
	if prepare != nil {
		prepare(admin)
	}
	n1.c.Shutdown()
	n1.zk.Close()
	waitActive(t, n2)
	return cl, admin
}

// setLeaderState rewrites h-p's state as its leader would, failing the test if it cannot.
func setLeaderState(t *testing.T, admin *zkutil.Client, p int32, s zkutil.PartitionState) {
	t.Helper()
	if err := leaderWrite(admin, kafka.TopicPartition{Topic: "h", Partition: p}, s); err != nil {
		t.Fatal(err)
	}
}

// leaderWrite rewrites tp's state as its leader would: conditional on the zkVersion it
// reads first, without the controller's fence.
func leaderWrite(admin *zkutil.Client, tp kafka.TopicPartition, s zkutil.PartitionState) error {
	_, v, err := admin.GetPartitionState(tp.Topic, tp.Partition)
	if err != nil {
		return err
	}
	_, err = admin.UpdatePartitionStateFromLeader(tp, s, v)
	return err
}

// TestControllerFailoverLeadsHintedPartitionsFirst: with a LeaderHint, the new controller
// reads, elects and sends LeaderAndIsr for the partitions the hint names as led by a dead
// broker before it reads the others, after an UpdateMetadata that carries only the live
// brokers (Kafka 2.8's). The hint orders and decides nothing: h-2, hinted as led by the dead
// broker 1 but led by 3 in ZooKeeper, keeps leader 3 (an election would choose 2); h-3,
// hinted as led by the live broker 3 but led by 1, is still elected, in the second round.
func TestControllerFailoverLeadsHintedPartitionsFirst(t *testing.T) {
	t.Parallel()
	tp := func(p int32) kafka.TopicPartition { return kafka.TopicPartition{Topic: "h", Partition: p} }
	hint := map[kafka.TopicPartition]int32{tp(0): 1, tp(1): 1, tp(2): 1, tp(3): 3}
	assignment := map[int32][]int32{0: {1, 2, 3}, 1: {1, 3, 2}, 2: {2, 3, 1}, 3: {1, 2, 3}}
	cl, admin := hintedFailover(t, assignment, func(admin *zkutil.Client) {
		setLeaderState(t, admin, 2, zkutil.PartitionState{Leader: 3, LeaderEpoch: 1, ISR: []int32{3, 2, 1}, ControllerEpoch: 1})
	}, hint, nil)
	wantState(t, admin, "h", 0, 2, []int32{2, 3}, 1)
	wantState(t, admin, "h", 1, 3, []int32{3, 2}, 1)
	wantState(t, admin, "h", 2, 3, []int32{3, 2}, 2) // the dead replica leaves the ISR; no election
	wantState(t, admin, "h", 3, 2, []int32{2, 3}, 1)
	testwait.For(t, waitTimeout, func() error {
		for _, b := range []int32{2, 3} {
			if err := checkHintedOrder(cl.rec, b); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkHintedOrder checks what broker b heard from controller 2 (epoch 2): first an
// UpdateMetadata without partitions naming brokers 2 and 3, then a LeaderAndIsr with exactly
// h-0, h-1 and h-2, then one with h-3.
func checkHintedOrder(rec *recorder, b int32) error {
	epoch2 := func(key int16) []kmsg.Request {
		var out []kmsg.Request
		for _, r := range rec.requests(b, key) {
			if e := controllerEpochOf(r); e == 2 {
				out = append(out, r)
			}
		}
		return out
	}
	ums, lais := epoch2(6), epoch2(4)
	if len(ums) == 0 || len(lais) < 2 {
		return fmt.Errorf("broker %d: %d UpdateMetadata and %d LeaderAndIsr of epoch 2", b, len(ums), len(lais))
	}
	first := ums[0].(*kmsg.UpdateMetadataRequest)
	if len(first.TopicStates) != 0 || len(first.LiveBrokers) != 2 {
		return fmt.Errorf("broker %d: first UpdateMetadata has %d topics and %d brokers", b, len(first.TopicStates), len(first.LiveBrokers))
	}
	umAt := rec.firstIndex(b, 6, func(r kmsg.Request) bool { return controllerEpochOf(r) == 2 })
	laiAt := rec.firstIndex(b, 4, func(r kmsg.Request) bool { return controllerEpochOf(r) == 2 })
	if umAt > laiAt {
		return fmt.Errorf("broker %d: LeaderAndIsr (request %d) before UpdateMetadata (request %d)", b, laiAt, umAt)
	}
	if got := laiPartitions(lais[0]); fmt.Sprint(got) != "[0 1 2]" {
		return fmt.Errorf("broker %d: first LeaderAndIsr of epoch 2 has h partitions %v, want [0 1 2]", b, got)
	}
	if got := laiPartitions(lais[1]); fmt.Sprint(got) != "[3]" {
		return fmt.Errorf("broker %d: second LeaderAndIsr of epoch 2 has h partitions %v, want [3]", b, got)
	}
	return nil
}

// controllerEpochOf returns the controller epoch of a LeaderAndIsr or UpdateMetadata.
func controllerEpochOf(r kmsg.Request) int32 {
	switch r := r.(type) {
	case *kmsg.LeaderAndISRRequest:
		return r.ControllerEpoch
	case *kmsg.UpdateMetadataRequest:
		return r.ControllerEpoch
	}
	return -1
}

// laiPartitions returns the partitions of topic h a LeaderAndIsr names, in request order.
func laiPartitions(r kmsg.Request) []int32 {
	var out []int32
	for _, ts := range r.(*kmsg.LeaderAndISRRequest).TopicStates {
		for _, ps := range ts.PartitionStates {
			if ts.Topic == "h" {
				out = append(out, ps.Partition)
			}
		}
	}
	return out
}

// interposeStore runs before once, just before the first UpdatePartitionStates whose states
// include tp, then writes as the wrapped Store does.
type interposeStore struct {
	Store
	tp     kafka.TopicPartition
	before func()
	once   sync.Once
}

func (s *interposeStore) UpdatePartitionStates(epochZkVersion int32, states map[kafka.TopicPartition]LeaderAndIsr) (map[kafka.TopicPartition]StoreResult, error) {
	if _, ok := states[s.tp]; ok {
		s.once.Do(s.before)
	}
	return s.Store.UpdatePartitionStates(epochZkVersion, states)
}

// TestControllerFailoverHintedElectionConflictRereads: the leader of h-0 shrinks its ISR
// between the new controller's read of h-0 (in the hinted first round) and its election
// write; the write fails its zkVersion check, and the controller reads h-0 again and elects
// from the new ISR [1 3]: broker 3, not broker 2, which the state it first read would give.
func TestControllerFailoverHintedElectionConflictRereads(t *testing.T) {
	t.Parallel()
	h0 := kafka.TopicPartition{Topic: "h", Partition: 0}
	var admin atomic.Pointer[zkutil.Client]
	interposed := make(chan error, 1)
	wrap := func(s Store) Store {
		return &interposeStore{Store: s, tp: h0, before: func() {
			interposed <- leaderWrite(admin.Load(), h0, zkutil.PartitionState{Leader: 1, ISR: []int32{1, 3}, ControllerEpoch: 1})
		}}
	}
	_, zc := hintedFailover(t, map[int32][]int32{0: {1, 2, 3}}, func(a *zkutil.Client) { admin.Store(a) },
		map[kafka.TopicPartition]int32{h0: 1}, wrap)
	select {
	case err := <-interposed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the new controller never wrote h-0")
	}
	wantState(t, zc, "h", 0, 3, []int32{3}, 1)
}
