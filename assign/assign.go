package assign

// Replica assignment: Kafka's assignReplicasToBrokers and the start index for added partitions.

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sort"
)

// Errors returned by Replicas. The broker maps ErrInvalidPartitions to
// INVALID_PARTITIONS and ErrInvalidReplicationFactor to INVALID_REPLICATION_FACTOR.
// ErrRackInfoIncomplete is Kafka's AdminOperationException, which reaches clients as
// UNKNOWN_SERVER_ERROR; the tools print its message. The texts keep the "controller:"
// prefix they had when this code lived in the controller: CreateTopics and
// CreatePartitions carry them in ErrorMessage, and moving the code changed no wire byte.
var (
	ErrInvalidPartitions        = errors.New("controller: number of partitions must be larger than 0")
	ErrInvalidReplicationFactor = errors.New("controller: invalid replication factor")
	ErrRackInfoIncomplete       = errors.New("controller: not all brokers have rack information for replica rack aware assignment")
)

// Broker is the input of replica assignment: a broker id and its rack ("" = none).
type Broker struct {
	ID   int32
	Rack string
}

// Rand is the random source of Replicas; *math/rand.Rand satisfies it.
type Rand interface {
	Intn(n int) int
}

type globalRand struct{}

func (globalRand) Intn(n int) int { return rand.IntN(n) }

// Replicas computes a replica assignment for nPartitions new partitions with
// replication factor rf, exactly as Kafka's AdminUtils.assignReplicasToBrokers:
//
//   - no broker has a rack: the rack-unaware algorithm over brokers in the given order
//     (callers that want Kafka's ZooKeeper-tool behaviour sort by id first);
//   - every broker has a rack: the rack-aware algorithm (KIP-36) over the rack-alternated list;
//   - only some have one: ErrRackInfoIncomplete (Kafka's "Enforced" mode; use StripRacks for
//     "Disabled", or for "Safe" when not all brokers have a rack).
//
// fixedStart >= 0 fixes both the start index and the replica shift (Kafka's fixedStartIndex;
// used when adding partitions); otherwise both are drawn from rnd (nil = a global source).
// Partition ids start at max(0, startPartition). The returned map and slices are new.
// Errors: ErrInvalidPartitions, ErrInvalidReplicationFactor (rf <= 0 or rf > len(brokers)),
// ErrRackInfoIncomplete.
func Replicas(brokers []Broker, nPartitions, rf int, fixedStart, startPartition int, rnd Rand) (map[int32][]int32, error) {
	if nPartitions <= 0 {
		return nil, ErrInvalidPartitions
	}
	if rf <= 0 {
		return nil, fmt.Errorf("%w: replication factor must be larger than 0", ErrInvalidReplicationFactor)
	}
	if rf > len(brokers) {
		return nil, fmt.Errorf("%w: replication factor: %d larger than available brokers: %d",
			ErrInvalidReplicationFactor, rf, len(brokers))
	}
	if rnd == nil {
		rnd = globalRand{}
	}
	withRack := 0
	for _, b := range brokers {
		if b.Rack != "" {
			withRack++
		}
	}
	switch withRack {
	case 0:
		ids := make([]int32, len(brokers))
		for i, b := range brokers {
			ids[i] = b.ID
		}
		return assignRackUnaware(ids, nPartitions, rf, fixedStart, startPartition, rnd), nil
	case len(brokers):
		return assignRackAware(brokers, nPartitions, rf, fixedStart, startPartition, rnd), nil
	default:
		return nil, ErrRackInfoIncomplete
	}
}

// StripRacks returns a copy of brokers without rack information, for Kafka's
// RackAwareMode.Disabled (and Safe when only some brokers have a rack).
func StripRacks(brokers []Broker) []Broker {
	out := make([]Broker, len(brokers))
	for i, b := range brokers {
		out[i] = Broker{ID: b.ID}
	}
	return out
}

// StartIndex is the fixedStart Kafka uses when adding partitions to a topic
// (AdminZkClient.createNewPartitionsAssignment): the index in brokers (sorted by id)
// of the first broker whose id is at least partition 0's first replica, or 0 when
// there is none or partition 0 has no replica. The new partitions then continue
// partition 0's round-robin instead of starting over at a random broker.
func StartIndex(brokers []Broker, partition0 []int32) int {
	if len(partition0) == 0 {
		return 0
	}
	for i, b := range brokers {
		if b.ID >= partition0[0] {
			return i
		}
	}
	return 0
}

// startAndShift draws Kafka's startIndex and nextReplicaShift, in that order.
func startAndShift(n, fixedStart int, rnd Rand) (start, shift int) {
	if fixedStart >= 0 {
		return fixedStart, fixedStart
	}
	start = rnd.Intn(n)
	shift = rnd.Intn(n)
	return start, shift
}

// placement is one partition's place in Kafka's round-robin assignment: the partition id,
// the index of its first replica in the broker list, and the shift of its followers.
type placement struct {
	pid, first, shift int
}

// placements yields the placements of nPartitions partitions from startPartition over n
// brokers, as both of Kafka's assignReplicasToBrokers loops walk them: the first replica
// moves one broker per partition, and the follower shift grows by one each time the
// partition ids wrap around the brokers. The start and shift are drawn (startAndShift) when
// the iteration begins.
func placements(n, nPartitions, fixedStart, startPartition int, rnd Rand) iter.Seq[placement] {
	return func(yield func(placement) bool) {
		start, shift := startAndShift(n, fixedStart, rnd)
		pid := max(0, startPartition)
		for range nPartitions {
			if pid > 0 && pid%n == 0 {
				shift++
			}
			if !yield(placement{pid: pid, first: (pid + start) % n, shift: shift}) {
				return
			}
			pid++
		}
	}
}

// replicaIndex is Kafka's AdminUtils.replicaIndex: the follower offset from the first
// replica never lands on the first replica itself.
func replicaIndex(first, secondShift, k, n int) int {
	shift := 1 + (secondShift+k)%(n-1)
	return (first + shift) % n
}

// assignRackUnaware is AdminUtils.assignReplicasToBrokersRackUnaware.
func assignRackUnaware(ids []int32, nPartitions, rf, fixedStart, startPartition int, rnd Rand) map[int32][]int32 {
	n := len(ids)
	out := make(map[int32][]int32, nPartitions)
	for pl := range placements(n, nPartitions, fixedStart, startPartition, rnd) {
		replicas := make([]int32, 0, rf)
		replicas = append(replicas, ids[pl.first])
		for j := range rf - 1 {
			replicas = append(replicas, ids[replicaIndex(pl.first, pl.shift, j, n)])
		}
		out[int32(pl.pid)] = replicas
	}
	return out
}

// RackAlternated returns Kafka's rack-alternated broker list: brokers grouped by
// rack, ids sorted inside each rack, racks sorted by name, then one broker from each rack
// in turn. Example {0:r1,1:r3,2:r3,3:r2,4:r2,5:r1} → [0,3,1,5,4,2].
func RackAlternated(brokers []Broker) []int32 {
	byRack := make(map[string][]int32)
	for _, b := range brokers {
		byRack[b.Rack] = append(byRack[b.Rack], b.ID)
	}
	racks := make([]string, 0, len(byRack))
	for r, ids := range byRack {
		slices.Sort(ids)
		racks = append(racks, r)
	}
	sort.Strings(racks)
	out := make([]int32, 0, len(brokers))
	for i := 0; len(out) < len(brokers); i++ {
		for _, r := range racks {
			if ids := byRack[r]; i < len(ids) {
				out = append(out, ids[i])
			}
		}
	}
	return out
}

// assignRackAware is AdminUtils.assignReplicasToBrokersRackAware.
func assignRackAware(brokers []Broker, nPartitions, rf, fixedStart, startPartition int, rnd Rand) map[int32][]int32 {
	rackOf := make(map[int32]string, len(brokers))
	racks := make(map[string]struct{})
	for _, b := range brokers {
		rackOf[b.ID] = b.Rack
		racks[b.Rack] = struct{}{}
	}
	numRacks := len(racks)
	list := RackAlternated(brokers)
	n := len(list)
	out := make(map[int32][]int32, nPartitions)
	for pl := range placements(n, nPartitions, fixedStart, startPartition, rnd) {
		leader := list[pl.first]
		replicas := []int32{leader}
		racksUsed := map[string]struct{}{rackOf[leader]: {}}
		brokersUsed := map[int32]struct{}{leader: {}}
		k := 0
		for range rf - 1 {
			// Bounded: within n-1 consecutive k every other broker is a candidate once, and
			// one of them satisfies the rule (an unused broker exists because rf <= n).
			for range n * n {
				b := list[replicaIndex(pl.first, pl.shift*numRacks, k, n)]
				k++
				_, rackUsed := racksUsed[rackOf[b]]
				_, brokerUsed := brokersUsed[b]
				if (!rackUsed || len(racksUsed) == numRacks) && (!brokerUsed || len(brokersUsed) == n) {
					replicas = append(replicas, b)
					racksUsed[rackOf[b]] = struct{}{}
					brokersUsed[b] = struct{}{}
					break
				}
			}
		}
		out[int32(pl.pid)] = replicas
	}
	return out
}
