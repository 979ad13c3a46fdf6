package broker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"samsa/assign"
	"samsa/broker/metadata"
	"samsa/config"
	"samsa/zkutil"
)

// Internal topic names (Kafka's Topic.INTERNAL_TOPICS).
const (
	consumerOffsetsTopic  = "__consumer_offsets"
	transactionStateTopic = "__transaction_state"
)

func isInternalTopic(t string) bool { return t == consumerOffsetsTopic || t == transactionStateTopic }

func validateTopicName(t string) error {
	if err := zkutil.ValidateTopicName(t); err != nil {
		return fmt.Errorf("%w: %w", errInvalidTopic, err)
	}
	return nil
}

func isTopicExists(err error) bool {
	return errors.Is(err, zkutil.ErrTopicExists) || errors.Is(err, errTopicExists)
}

// metaWatch lets waiters block until the next metadata update.
type metaWatch struct {
	mu sync.Mutex
	ch chan struct{} // closed and replaced on each update
}

func (w *metaWatch) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

func (w *metaWatch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
	}
	w.ch = make(chan struct{})
}

// metadataUpdated is called after every UpdateMetadata.
func (b *Broker) metadataUpdated() { b.metaUpdates.fire() }

// liveBrokerMeta returns the live brokers, sorted by id, for assignment.
func liveBrokerMeta(snap *metadata.Snapshot) []assign.Broker {
	out := make([]assign.Broker, 0, len(snap.BrokerIDs))
	for _, id := range snap.BrokerIDs {
		bm := assign.Broker{ID: id}
		if r := snap.Brokers[id].Rack; r != nil {
			bm.Rack = *r
		}
		out = append(out, bm)
	}
	return out
}

// topicSpec is a validated request to create one topic.
type topicSpec struct {
	name       string
	partitions int32
	rf         int16
	assignment map[int32][]int32 // explicit assignment, or nil
	configs    map[string]string
}

// planTopic validates spec and returns the assignment to write (Kafka
// ZkAdminManager.createTopics validation).
func (b *Broker) planTopic(spec topicSpec) (map[int32][]int32, error) {
	if err := validateTopicName(spec.name); err != nil {
		return nil, err
	}
	if err := config.ValidateTopicOverrides(spec.configs); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidConfig, err)
	}
	snap := b.meta.Snapshot()
	if spec.assignment != nil {
		if spec.partitions != -1 || spec.rf != -1 {
			return nil, fmt.Errorf("%w: both partition count/replication factor and a replica assignment were given", errInvalidRequest)
		}
		return validateAssignment(snap, spec.assignment)
	}
	n, rf := spec.partitions, int32(spec.rf)
	if n == -1 {
		n = b.cfg.NumPartitions
	}
	if rf == -1 {
		rf = b.cfg.DefaultReplicationFactor
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: number of partitions must be larger than 0", errInvalidPartitions)
	}
	if rf <= 0 {
		return nil, fmt.Errorf("%w: replication factor must be larger than 0", errInvalidReplicationFactor)
	}
	a, err := assign.Replicas(liveBrokerMeta(snap), int(n), int(rf), -1, 0, nil)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// validateAssignment checks an explicit assignment (Kafka
// AdminZkClient.validateTopicCreate): partitions 0..n-1, equal replication
// factor, no duplicate replicas, live brokers only.
func validateAssignment(snap *metadata.Snapshot, a map[int32][]int32) (map[int32][]int32, error) {
	if len(a) == 0 {
		return nil, fmt.Errorf("%w: empty replica assignment", errInvalidReplicaAssignment)
	}
	rf := -1
	for p := int32(0); p < int32(len(a)); p++ {
		rs, ok := a[p]
		if !ok {
			return nil, fmt.Errorf("%w: partitions must be numbered 0..%d", errInvalidReplicaAssignment, len(a)-1)
		}
		if len(rs) == 0 {
			return nil, fmt.Errorf("%w: partition %d has no replicas", errInvalidReplicaAssignment, p)
		}
		if rf == -1 {
			rf = len(rs)
		} else if rf != len(rs) {
			return nil, fmt.Errorf("%w: all partitions must have the same number of replicas", errInvalidReplicaAssignment)
		}
		seen := map[int32]bool{}
		for _, r := range rs {
			if seen[r] {
				return nil, fmt.Errorf("%w: duplicate replica %d in partition %d", errInvalidReplicaAssignment, r, p)
			}
			seen[r] = true
			if !snap.Alive(r) {
				return nil, fmt.Errorf("%w: unknown broker %d in partition %d", errInvalidReplicaAssignment, r, p)
			}
		}
	}
	return a, nil
}

// createTopic writes the topic to ZooKeeper (the controller does the rest).
func (b *Broker) createTopic(spec topicSpec, assignment map[int32][]int32) error {
	// The topic id is written with the assignment, as Kafka 2.8 does.
	if err := b.zk.CreateTopicWithID(spec.name, zkutil.NewTopicID(), assignment, spec.configs); err != nil {
		return err
	}
	b.log.WithField("topic", spec.name).WithField("partitions", len(assignment)).Info("created topic")
	return nil
}

// autoCreateTopic creates topic with num.partitions and
// default.replication.factor (Metadata with auto.create.topics.enable).
// An internal topic gets its own settings instead, as Kafka's
// KafkaApis.getTopicMetadata → createInternalTopic: a __consumer_offsets
// made with num.partitions would leave every group that hashes past its
// last partition (offsets.topic.num.partitions is what the coordinator
// divides by) with COORDINATOR_NOT_AVAILABLE for good.
func (b *Broker) autoCreateTopic(_ context.Context, topic string) error {
	switch topic {
	case consumerOffsetsTopic:
		return b.createOffsetsTopic()
	case transactionStateTopic:
		return b.createTxnStateTopic()
	}
	spec := topicSpec{name: topic, partitions: -1, rf: -1}
	a, err := b.planTopic(spec)
	if err != nil {
		return err
	}
	return b.createTopic(spec, a)
}

// waitForLeaders blocks until every partition of topics has a live leader
// in the metadata cache, ctx ends or deadline passes. It returns the topics
// still without leaders.
func (b *Broker) waitForLeaders(ctx context.Context, topics map[string]int, deadline time.Time) []string {
	for {
		next := b.metaUpdates.next()
		snap := b.meta.Snapshot()
		var missing []string
		for t, n := range topics {
			ps := snap.Partitions(t)
			ok := len(ps) >= n
			for _, p := range ps {
				if p.Leader < 0 || !snap.Alive(p.Leader) {
					ok = false
				}
			}
			if !ok {
				missing = append(missing, t)
			}
		}
		sort.Strings(missing)
		if len(missing) == 0 {
			return nil
		}
		d := time.Until(deadline)
		if d <= 0 {
			return missing
		}
		t := time.NewTimer(d)
		select {
		case <-next:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return missing
		case <-t.C:
		}
	}
}
