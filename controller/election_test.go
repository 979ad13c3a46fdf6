package controller

import (
	"reflect"
	"testing"

	"samsa/kafka"
)

// TestControllerElectOfflineLeader checks OfflinePartitionLeaderElection (Kafka Election.scala):
// "first replica in assignment order that is live and in the ISR; otherwise, with unclean
// leader election enabled, the first live replica".
func TestControllerElectOfflineLeader(t *testing.T) {
	tests := []struct {
		name                  string
		assignment, isr, live []int32
		unclean               bool
		wantOK                bool
		wantLeader            int32
		wantIsr               []int32
		wantUnclean           bool
	}{
		{"first live isr in assignment order", []int32{1, 2, 3}, []int32{3, 2}, []int32{2, 3}, false, true, 2, []int32{3, 2}, false},
		{"isr shrinks to live", []int32{1, 2, 3}, []int32{1, 2, 3}, []int32{2, 3}, false, true, 2, []int32{2, 3}, false},
		{"preferred still live", []int32{1, 2, 3}, []int32{1, 2, 3}, []int32{1, 2, 3}, false, true, 1, []int32{1, 2, 3}, false},
		{"live replica not in isr is skipped", []int32{1, 2, 3}, []int32{3}, []int32{1, 3}, false, true, 3, []int32{3}, false},
		{"no live isr, clean", []int32{1, 2, 3}, []int32{1}, []int32{2, 3}, false, false, 0, nil, false},
		{"no live isr, unclean", []int32{1, 2, 3}, []int32{1}, []int32{3, 2}, true, true, 2, []int32{2}, true},
		{"unclean prefers isr when possible", []int32{1, 2, 3}, []int32{3}, []int32{2, 3}, true, true, 3, []int32{3}, false},
		{"nothing live, unclean", []int32{1, 2}, []int32{1}, nil, true, false, 0, nil, false},
		{"empty assignment", nil, nil, []int32{1}, true, false, 0, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			el, ok := ElectOfflineLeader(tc.assignment, tc.isr, tc.live, tc.unclean)
			if ok != tc.wantOK {
				t.Fatalf("ok=%v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if el.Leader != tc.wantLeader || !reflect.DeepEqual(el.Isr, tc.wantIsr) || el.Unclean != tc.wantUnclean {
				t.Fatalf("got %+v, want leader %d isr %v unclean %v", el, tc.wantLeader, tc.wantIsr, tc.wantUnclean)
			}
		})
	}
}

// TestControllerElectOtherStrategies checks the reassignment, preferred-replica and
// controlled-shutdown strategies of Kafka 2.8's Election.scala.
func TestControllerElectOtherStrategies(t *testing.T) {
	type result struct {
		ok     bool
		leader int32
		isr    []int32
	}
	tests := []struct {
		name string
		run  func() (Election, bool)
		want result
	}{
		{"reassign: first target live in isr", func() (Election, bool) {
			return ElectReassignLeader([]int32{4, 5, 6}, []int32{1, 5, 4}, []int32{1, 4, 5})
		}, result{true, 4, []int32{1, 5, 4}}},
		{"reassign: target member not in isr skipped", func() (Election, bool) {
			return ElectReassignLeader([]int32{4, 5}, []int32{1, 5}, []int32{1, 4, 5})
		}, result{true, 5, []int32{1, 5}}},
		{"reassign: none eligible", func() (Election, bool) {
			return ElectReassignLeader([]int32{4, 5}, []int32{1}, []int32{1, 4, 5})
		}, result{ok: false}},
		{"preferred: head live and in isr", func() (Election, bool) {
			return ElectPreferredLeader([]int32{2, 1}, []int32{1, 2}, []int32{1, 2})
		}, result{true, 2, []int32{1, 2}}},
		{"preferred: head dead", func() (Election, bool) {
			return ElectPreferredLeader([]int32{2, 1}, []int32{1, 2}, []int32{1})
		}, result{ok: false}},
		{"preferred: head not in isr", func() (Election, bool) {
			return ElectPreferredLeader([]int32{2, 1}, []int32{1}, []int32{1, 2})
		}, result{ok: false}},
		{"preferred: empty assignment", func() (Election, bool) {
			return ElectPreferredLeader(nil, []int32{1}, []int32{1})
		}, result{ok: false}},
		{"controlled shutdown: skips shutting down, isr drops it", func() (Election, bool) {
			return ElectControlledShutdownLeader([]int32{1, 2, 3}, []int32{1, 2, 3}, []int32{1, 2, 3}, []int32{1})
		}, result{true, 2, []int32{2, 3}}},
		{"controlled shutdown: only replica shutting down", func() (Election, bool) {
			return ElectControlledShutdownLeader([]int32{1}, []int32{1}, []int32{1}, []int32{1})
		}, result{ok: false}},
		{"controlled shutdown: dead replica skipped", func() (Election, bool) {
			return ElectControlledShutdownLeader([]int32{1, 2, 3}, []int32{1, 2, 3}, []int32{1, 3}, []int32{1})
		}, result{true, 3, []int32{2, 3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			el, ok := tc.run()
			if ok != tc.want.ok {
				t.Fatalf("ok=%v, want %v", ok, tc.want.ok)
			}
			if ok && (el.Leader != tc.want.leader || !reflect.DeepEqual(el.Isr, tc.want.isr) || el.Unclean) {
				t.Fatalf("got %+v, want %+v", el, tc.want)
			}
		})
	}
}

// TestControllerRemoveReplicaFromIsr checks the OfflineReplica ISR shrink: "an ISR is never
// shrunk to empty"; a removed leader becomes NoLeader; the leader epoch moves by one.
func TestControllerRemoveReplicaFromIsr(t *testing.T) {
	base := LeaderAndIsr{Leader: 1, LeaderEpoch: 4, Isr: []int32{1, 2, 3}, ControllerEpoch: 2, ZkVersion: 9}
	tests := []struct {
		name        string
		state       LeaderAndIsr
		replica     int32
		wantChanged bool
		want        LeaderAndIsr
	}{
		{"follower leaves", base, 2, true, LeaderAndIsr{Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 3}, ControllerEpoch: 2, ZkVersion: 9}},
		{"leader leaves", base, 1, true, LeaderAndIsr{Leader: NoLeader, LeaderEpoch: 5, Isr: []int32{2, 3}, ControllerEpoch: 2, ZkVersion: 9}},
		{"not in isr", base, 4, false, base},
		{"sole member kept", LeaderAndIsr{Leader: 1, LeaderEpoch: 0, Isr: []int32{1}}, 1, true,
			LeaderAndIsr{Leader: NoLeader, LeaderEpoch: 1, Isr: []int32{1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := RemoveReplicaFromIsr(tc.state, tc.replica)
			if changed != tc.wantChanged || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v changed=%v, want %+v changed=%v", got, changed, tc.want, tc.wantChanged)
			}
		})
	}
	if !reflect.DeepEqual(base.Isr, []int32{1, 2, 3}) {
		t.Fatalf("input ISR mutated: %v", base.Isr)
	}
}

// TestControllerInitialLeaderAndIsr checks New → Online: "leader = first live replica in
// assignment order, ISR = all live assigned replicas, leader_epoch 0".
func TestControllerInitialLeaderAndIsr(t *testing.T) {
	tests := []struct {
		name             string
		assignment, live []int32
		wantOK           bool
		want             LeaderAndIsr
	}{
		{"all live", []int32{3, 1, 2}, []int32{1, 2, 3}, true, LeaderAndIsr{Leader: 3, Isr: []int32{3, 1, 2}, ControllerEpoch: 7}},
		{"first dead", []int32{3, 1, 2}, []int32{1, 2}, true, LeaderAndIsr{Leader: 1, Isr: []int32{1, 2}, ControllerEpoch: 7}},
		{"none live", []int32{3}, []int32{1, 2}, false, LeaderAndIsr{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := InitialLeaderAndIsr(tc.assignment, tc.live, 7)
			if ok != tc.wantOK || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v ok=%v, want %+v ok=%v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestControllerPreferredLeaderImbalance checks the auto-rebalance rule: "if imbalance >
// leader.imbalance.per.broker.percentage/100, run a preferred election for those partitions".
func TestControllerPreferredLeaderImbalance(t *testing.T) {
	tp := func(p int32) kafka.TopicPartition { return kafka.TopicPartition{Topic: "t", Partition: p} }
	// Broker 1 prefers p0..p9; broker 2 prefers p10, p11.
	assignments := map[kafka.TopicPartition][]int32{}
	for p := int32(0); p < 10; p++ {
		assignments[tp(p)] = []int32{1, 2}
	}
	assignments[tp(10)] = []int32{2, 1}
	assignments[tp(11)] = []int32{2, 1}
	led := func(notLedBy1, notLedBy2 int) map[kafka.TopicPartition]int32 {
		m := map[kafka.TopicPartition]int32{}
		for p := int32(0); p < 10; p++ {
			m[tp(p)] = 1
			if int(p) < notLedBy1 {
				m[tp(p)] = 2
			}
		}
		m[tp(10)], m[tp(11)] = 2, 2
		if notLedBy2 > 0 {
			m[tp(10)] = 1
		}
		return m
	}
	tests := []struct {
		name       string
		leaders    map[kafka.TopicPartition]int32
		percentage int
		want       []kafka.TopicPartition
	}{
		{"balanced", led(0, 0), 10, nil},
		{"exactly at threshold is not imbalanced", led(1, 0), 10, nil},
		{"above threshold", led(2, 0), 10, []kafka.TopicPartition{tp(0), tp(1)}},
		{"both brokers", led(2, 1), 10, []kafka.TopicPartition{tp(0), tp(1), tp(10)}},
		{"zero percent", led(1, 0), 0, []kafka.TopicPartition{tp(0)}},
		{"no leader is not imbalance", map[kafka.TopicPartition]int32{tp(10): 2}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PreferredLeaderImbalance(assignments, tc.leaders, tc.percentage)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestControllerReassignTo checks KIP-455's replica sets: "RS = TRS + (ORS − TRS), AR = TRS −
// ORS, RR = ORS − TRS", with reference §3.9's example.
func TestControllerReassignTo(t *testing.T) {
	tests := []struct {
		name                                string
		origin, target                      []int32
		wantReplicas, wantAdding, wantRemov []int32
	}{
		{"disjoint", []int32{1, 2, 3}, []int32{4, 5, 6}, []int32{4, 5, 6, 1, 2, 3}, []int32{4, 5, 6}, []int32{1, 2, 3}},
		{"overlap", []int32{1, 2}, []int32{2, 3}, []int32{2, 3, 1}, []int32{3}, []int32{1}},
		{"reorder only", []int32{1, 2}, []int32{2, 1}, []int32{2, 1}, []int32{}, []int32{}},
		{"grow", []int32{1}, []int32{1, 2}, []int32{1, 2}, []int32{2}, []int32{}},
		{"shrink", []int32{1, 2, 3}, []int32{3}, []int32{3, 1, 2}, []int32{}, []int32{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, a, rm := ReassignTo(tc.origin, tc.target)
			if !reflect.DeepEqual(r, tc.wantReplicas) || !reflect.DeepEqual(a, tc.wantAdding) || !reflect.DeepEqual(rm, tc.wantRemov) {
				t.Fatalf("got RS %v AR %v RR %v", r, a, rm)
			}
			if got := OriginReplicas(r, a); !reflect.DeepEqual(got, filter(tc.origin, func(int32) bool { return true })) && !sameSet(got, tc.origin) {
				t.Fatalf("origin %v, want %v", got, tc.origin)
			}
			if got := TargetReplicas(r, rm); !reflect.DeepEqual(got, tc.target) {
				t.Fatalf("target %v, want %v", got, tc.target)
			}
		})
	}
}

func sameSet(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !contains(b, x) {
			return false
		}
	}
	return true
}
