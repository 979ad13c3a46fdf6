package assign

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

func ids(n int) []Broker {
	out := make([]Broker, n)
	for i := range out {
		out[i] = Broker{ID: int32(i)}
	}
	return out
}

// seqRand returns fixed draws in order, so the random start and shift are known.
type seqRand struct{ draws []int }

func (r *seqRand) Intn(n int) int {
	v := r.draws[0] % n
	r.draws = r.draws[1:]
	return v
}

// TestAssignReplicasRackUnaware checks AdminUtils.assignReplicasToBrokersRackUnaware's
// worked example (reference §4.1) and the start/shift parameters.
func TestAssignReplicasRackUnaware(t *testing.T) {
	tests := []struct {
		name                        string
		brokers                     []Broker
		partitions, rf, fixed, from int
		rnd                         Rand
		want                        map[int32][]int32
	}{
		{
			name: "kafka example 5 brokers 10 partitions rf3", brokers: ids(5), partitions: 10, rf: 3, fixed: 0, from: 0,
			want: map[int32][]int32{0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
				5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2}},
		},
		{
			name: "rf1 round robin", brokers: ids(3), partitions: 4, rf: 1, fixed: 0,
			want: map[int32][]int32{0: {0}, 1: {1}, 2: {2}, 3: {0}},
		},
		{
			name: "single broker", brokers: ids(1), partitions: 2, rf: 1, fixed: -1, rnd: &seqRand{[]int{0, 0}},
			want: map[int32][]int32{0: {0}, 1: {0}},
		},
		{
			name: "random start 2 shift 1", brokers: ids(4), partitions: 4, rf: 2, fixed: -1, rnd: &seqRand{[]int{2, 1}},
			want: map[int32][]int32{0: {2, 0}, 1: {3, 1}, 2: {0, 2}, 3: {1, 3}},
		},
		{
			name: "fixed start 1 from partition 3 (adding partitions)", brokers: ids(3), partitions: 3, rf: 2, fixed: 1, from: 3,
			want: map[int32][]int32{3: {1, 2}, 4: {2, 0}, 5: {0, 1}},
		},
		{
			name: "broker order is kept", brokers: []Broker{{ID: 7}, {ID: 3}, {ID: 5}}, partitions: 3, rf: 2, fixed: 0,
			want: map[int32][]int32{0: {7, 3}, 1: {3, 5}, 2: {5, 7}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Replicas(tc.brokers, tc.partitions, tc.rf, tc.fixed, tc.from, tc.rnd)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAssignReplicasRackAware checks the KIP-36 algorithm against reference §4.2.
func TestAssignReplicasRackAware(t *testing.T) {
	brokers := []Broker{{0, "r1"}, {1, "r3"}, {2, "r3"}, {3, "r2"}, {4, "r2"}, {5, "r1"}}
	if got, want := RackAlternated(brokers), []int32{0, 3, 1, 5, 4, 2}; !slices.Equal(got, want) {
		t.Fatalf("rack alternated list %v, want %v", got, want)
	}
	got, err := Replicas(brokers, 7, 3, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{0: {0, 3, 1}, 1: {3, 1, 5}, 2: {1, 5, 4}, 3: {5, 4, 2}, 4: {4, 2, 0}, 5: {2, 0, 3}, 6: {0, 4, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	t.Run("uneven racks", func(t *testing.T) {
		b := []Broker{{0, "a"}, {1, "a"}, {2, "a"}, {3, "b"}}
		if got, want := RackAlternated(b), []int32{0, 3, 1, 2}; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

// TestAssignReplicasErrors checks the validation errors of assignReplicasToBrokers.
func TestAssignReplicasErrors(t *testing.T) {
	tests := []struct {
		name           string
		brokers        []Broker
		partitions, rf int
		want           error
	}{
		{"zero partitions", ids(3), 0, 1, ErrInvalidPartitions},
		{"negative partitions", ids(3), -1, 1, ErrInvalidPartitions},
		{"zero rf", ids(3), 1, 0, ErrInvalidReplicationFactor},
		{"rf above brokers", ids(3), 1, 4, ErrInvalidReplicationFactor},
		{"no brokers", nil, 1, 1, ErrInvalidReplicationFactor},
		{"partial racks", []Broker{{0, "a"}, {1, ""}}, 1, 1, ErrRackInfoIncomplete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Replicas(tc.brokers, tc.partitions, tc.rf, -1, -1, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	if got := StripRacks([]Broker{{0, "a"}, {1, ""}}); !reflect.DeepEqual(got, []Broker{{0, ""}, {1, ""}}) {
		t.Fatalf("StripRacks = %v", got)
	}
}

// TestAssignReplicasProperties sweeps sizes, starts and shifts: every partition has
// rf distinct live replicas, leaders are spread evenly over whole rounds, and with racks
// each partition spans min(rf, racks) racks (KIP-36's guarantee).
func TestAssignReplicasProperties(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for n := 1; n <= 7; n++ {
		for rf := 1; rf <= n; rf++ {
			for _, racks := range []int{0, 1, 2, 3} {
				for trial := 0; trial < 5; trial++ {
					brokers := ids(n)
					if racks > 0 {
						for i := range brokers {
							brokers[i].Rack = fmt.Sprintf("rack%d", i%racks)
						}
					}
					parts := n * 3
					got, err := Replicas(brokers, parts, rf, -1, -1, rnd)
					if err != nil {
						t.Fatalf("n=%d rf=%d racks=%d: %v", n, rf, racks, err)
					}
					leaders := map[int32]int{}
					for p := int32(0); p < int32(parts); p++ {
						rs := got[p]
						if len(rs) != rf {
							t.Fatalf("n=%d rf=%d racks=%d p=%d: replicas %v", n, rf, racks, p, rs)
						}
						seen := map[int32]bool{}
						rackSeen := map[string]bool{}
						for _, r := range rs {
							if seen[r] || r < 0 || int(r) >= n {
								t.Fatalf("n=%d rf=%d p=%d: bad replicas %v", n, rf, p, rs)
							}
							seen[r] = true
							rackSeen[brokers[r].Rack] = true
						}
						if racks > 0 && len(rackSeen) != min(rf, min(racks, n)) {
							t.Fatalf("n=%d rf=%d racks=%d p=%d: replicas %v span %d racks", n, rf, racks, p, rs, len(rackSeen))
						}
						leaders[rs[0]]++
					}
					for id, c := range leaders {
						if c != 3 {
							t.Fatalf("n=%d rf=%d racks=%d: broker %d leads %d partitions, want 3", n, rf, racks, id, c)
						}
					}
				}
			}
		}
	}
}

// TestAssignStartIndex checks AdminZkClient.createNewPartitionsAssignment's
// start index: the first broker (by id) at or above partition 0's first
// replica, including when that broker is gone.
func TestAssignStartIndex(t *testing.T) {
	brokers := []Broker{{ID: 1}, {ID: 3}, {ID: 5}, {ID: 7}}
	for _, c := range []struct {
		p0   []int32
		want int
	}{
		{[]int32{1, 3}, 0},
		{[]int32{5, 7}, 2},
		{[]int32{7}, 3},
		{[]int32{4, 1}, 2}, // broker 4 is not live: Kafka takes the next id, 5
		{[]int32{9}, 0},    // above every live id: indexWhere is -1, max(0, -1)
		{[]int32{0}, 0},
		{nil, 0},
	} {
		if got := StartIndex(brokers, c.p0); got != c.want {
			t.Errorf("StartIndex(%v) = %d, want %d", c.p0, got, c.want)
		}
	}
	if got := StartIndex(nil, []int32{1}); got != 0 {
		t.Errorf("StartIndex with no brokers = %d, want 0", got)
	}
}
