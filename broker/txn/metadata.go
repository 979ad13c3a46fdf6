package txn

import (
	"math"
	"sort"

	"samsa/kafka"
)

// noProducerID and noProducerEpoch are Kafka's RecordBatch.NO_PRODUCER_ID
// and NO_PRODUCER_EPOCH.
const (
	noProducerID    int64 = -1
	noProducerEpoch int16 = -1
)

// epochExhausted is Kafka's TransactionMetadata.isEpochExhausted: an epoch
// this high cannot be bumped twice more (a fence then a re-init), so the
// next InitProducerId rotates to a new producer id.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// metadata is one transactional id's state (Kafka's TransactionMetadata).
// Every field is guarded by Coordinator.mu.
type metadata struct {
	id            string
	pid           int64
	lastPID       int64 // not persisted: -1 after a reload, as in Kafka
	epoch         int16
	lastEpoch     int16 // not persisted
	timeoutMs     int32
	state         State
	partitions    map[kafka.TopicPartition]struct{}
	startMs       int64
	updateMs      int64
	pending       State // noState unless a transition's append is in flight
	markerRunning bool  // a marker loop owns the Prepare* → Complete* step
	// unreplicated is the Prepare* state a Complete* record applied
	// before its replication replaced, until the record is replicated
	// (noState otherwise); unreplicatedNext is the offset after it.
	unreplicated     State
	unreplicatedNext int64
	unknownDest      int  // partitions whose last marker round found no leader
	appendRetry      bool // the Complete* append failed and is being retried
	// changed is closed (and reset to nil) when state or pending changes;
	// requests waiting for an in-flight step select on it (pending_wait.go).
	changed chan struct{}
	// queuedAdds are partitions of AddPartitionsToTxn requests waiting
	// behind a pending append, by the producer id and epoch they were
	// checked against; the next AddPartitions write takes those of its own
	// producer epoch along (one append for several requests) and clears
	// them. Each waiter still answers from the committed state.
	queuedAdds map[queuedAdd]struct{}
	chain      chainState // AddPartitions writes in flight together (chain.go)
}

// queuedAdd is one partition a waiting AddPartitionsToTxn asks for.
type queuedAdd struct {
	pid   int64
	epoch int16
	tp    kafka.TopicPartition
}

// transit is a state change computed from a metadata snapshot before it
// is written (Kafka's TxnTransitMetadata). Partitions is a fresh slice.
type transit struct {
	pid, lastPID     int64
	epoch, lastEpoch int16
	timeoutMs        int32
	state            State
	partitions       []kafka.TopicPartition
	startMs          int64
	updateMs         int64
	chain            uint64 // an AddPartitions write's number (chain.go), 0 for others
}

// snapshot returns md's committed fields as a transit to edit.
func (md *metadata) snapshot() transit {
	return transit{pid: md.pid, lastPID: md.lastPID, epoch: md.epoch, lastEpoch: md.lastEpoch,
		timeoutMs: md.timeoutMs, state: md.state, partitions: md.partitionList(),
		startMs: md.startMs, updateMs: md.updateMs}
}

// partitionList returns md's partitions sorted (topic, partition).
func (md *metadata) partitionList() []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(md.partitions))
	for tp := range md.partitions {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// apply installs a written transit.
func (md *metadata) apply(t transit) {
	md.pid, md.lastPID, md.epoch, md.lastEpoch = t.pid, t.lastPID, t.epoch, t.lastEpoch
	md.timeoutMs, md.state, md.startMs, md.updateMs = t.timeoutMs, t.state, t.startMs, t.updateMs
	md.partitions = make(map[kafka.TopicPartition]struct{}, len(t.partitions))
	for _, tp := range t.partitions {
		md.partitions[tp] = struct{}{}
	}
}

// value is t as the record value written to __transaction_state.
func (t transit) value() Value {
	return Value{ProducerID: t.pid, ProducerEpoch: t.epoch, TimeoutMs: t.timeoutMs, State: t.state,
		Partitions: t.partitions, UpdateMs: t.updateMs, StartMs: t.startMs}
}

// fromValue rebuilds a metadata from a loaded record.
func fromValue(id string, v *Value) *metadata {
	md := &metadata{id: id, lastPID: noProducerID, lastEpoch: noProducerEpoch, pending: noState, unreplicated: noState}
	md.apply(transit{pid: v.ProducerID, lastPID: noProducerID, epoch: v.ProducerEpoch, lastEpoch: noProducerEpoch,
		timeoutMs: v.TimeoutMs, state: v.State, partitions: v.Partitions, startMs: v.StartMs, updateMs: v.UpdateMs})
	return md
}
