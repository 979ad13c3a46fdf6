package controller

import (
	"maps"
	"slices"

	"samsa/kafka"
)

// controllerContext is the active controller's view of the cluster (Kafka's
// ControllerContext). It exists only while this broker is the controller and is owned by the
// event goroutine: no locks.
type controllerContext struct {
	epoch          int32 // controller epoch won in the election
	epochZkVersion int32 // zkVersion of /controller_epoch; fences every write

	liveBrokers  map[int32]LiveBroker // registered brokers, by id
	shuttingDown map[int32]struct{}   // brokers in controlled shutdown

	topicIDs        map[string][16]byte
	assignments     map[string]map[int32][]int32     // topic → partition → replicas (RS)
	adding          map[kafka.TopicPartition][]int32 // reassignment in progress: AR (KIP-455)
	removing        map[kafka.TopicPartition][]int32 // reassignment in progress: RR
	leadership      map[kafka.TopicPartition]LeaderAndIsr
	partitionStates map[kafka.TopicPartition]PartitionState
	replicaStates   map[PartitionReplica]ReplicaState

	topicsToBeDeleted           map[string]struct{} // queued for deletion; UpdateMetadata reports leader -2
	topicsWithDeletionStarted   map[string]struct{} // partitions already moved to NonExistent
	topicsIneligibleForDeletion map[string]struct{} // waiting for a dead replica's broker

	// replicasOnOfflineDirs holds, per live broker, the partitions it answered LeaderAndIsr
	// for with KAFKA_STORAGE_ERROR: their log dir failed (KIP-112). Such replicas count as
	// offline although their broker is live (isReplicaLive, isReplicaOnline). Cleared when
	// the broker registers again or dies.
	replicasOnOfflineDirs map[int32]map[kafka.TopicPartition]struct{}
}

func newControllerContext(epoch, epochZkVersion int32) *controllerContext {
	return &controllerContext{
		epoch:             epoch,
		epochZkVersion:    epochZkVersion,
		liveBrokers:       make(map[int32]LiveBroker),
		shuttingDown:      make(map[int32]struct{}),
		topicIDs:          make(map[string][16]byte),
		assignments:       make(map[string]map[int32][]int32),
		adding:            make(map[kafka.TopicPartition][]int32),
		removing:          make(map[kafka.TopicPartition][]int32),
		leadership:        make(map[kafka.TopicPartition]LeaderAndIsr),
		partitionStates:   make(map[kafka.TopicPartition]PartitionState),
		replicaStates:     make(map[PartitionReplica]ReplicaState),
		topicsToBeDeleted: make(map[string]struct{}),

		topicsWithDeletionStarted:   make(map[string]struct{}),
		topicsIneligibleForDeletion: make(map[string]struct{}),
		replicasOnOfflineDirs:       make(map[int32]map[kafka.TopicPartition]struct{}),
	}
}

// isLive reports whether broker id is registered (live or shutting down).
func (cc *controllerContext) isLive(id int32) bool {
	_, ok := cc.liveBrokers[id]
	return ok
}

// isOnline reports whether broker id is live and not shutting down: only such brokers may
// become leaders or join a new ISR (Kafka's isReplicaOnline without shutting-down brokers).
func (cc *controllerContext) isOnline(id int32) bool {
	_, shutting := cc.shuttingDown[id]
	return cc.isLive(id) && !shutting
}

// isOnOfflineDir reports whether broker id answered KAFKA_STORAGE_ERROR for tp.
func (cc *controllerContext) isOnOfflineDir(id int32, tp kafka.TopicPartition) bool {
	_, ok := cc.replicasOnOfflineDirs[id][tp]
	return ok
}

// isReplicaLive reports whether broker id's replica of tp is available: its broker is
// registered (live or shutting down) and its log dir has not failed (Kafka's
// isReplicaOnline with includeShuttingDownBrokers).
func (cc *controllerContext) isReplicaLive(id int32, tp kafka.TopicPartition) bool {
	return cc.isLive(id) && !cc.isOnOfflineDir(id, tp)
}

// isReplicaOnline reports whether broker id's replica of tp may lead or join a new ISR: its
// broker is online (live, not shutting down) and its log dir has not failed (Kafka's
// isReplicaOnline).
func (cc *controllerContext) isReplicaOnline(id int32, tp kafka.TopicPartition) bool {
	return cc.isOnline(id) && !cc.isOnOfflineDir(id, tp)
}

// onlineReplicas returns the replicas of tp that are online (isReplicaOnline), in
// assignment order.
func (cc *controllerContext) onlineReplicas(tp kafka.TopicPartition) []int32 {
	return filter(cc.replicas(tp), func(id int32) bool { return cc.isReplicaOnline(id, tp) })
}

// liveBrokerIDs returns the live (or shutting-down) broker ids, sorted.
func (cc *controllerContext) liveBrokerIDs() []int32 {
	return slices.Sorted(maps.Keys(cc.liveBrokers))
}

// replicas returns the assignment of tp (nil when unknown). Do not mutate.
func (cc *controllerContext) replicas(tp kafka.TopicPartition) []int32 {
	return cc.assignments[tp.Topic][tp.Partition]
}

// liveReplicas returns the replicas of tp that are live (isReplicaLive), in assignment
// order.
func (cc *controllerContext) liveReplicas(tp kafka.TopicPartition) []int32 {
	return filter(cc.replicas(tp), func(id int32) bool { return cc.isReplicaLive(id, tp) })
}

// offlineReplicas returns the replicas of tp that are not live: on a broker that is not
// registered or on a failed log dir (UpdateMetadata's offline_replicas).
func (cc *controllerContext) offlineReplicas(tp kafka.TopicPartition) []int32 {
	return filter(cc.replicas(tp), func(id int32) bool { return !cc.isReplicaLive(id, tp) })
}

// setAssignment records a partition's replicas.
func (cc *controllerContext) setAssignment(tp kafka.TopicPartition, replicas []int32) {
	parts := cc.assignments[tp.Topic]
	if parts == nil {
		parts = make(map[int32][]int32)
		cc.assignments[tp.Topic] = parts
	}
	parts[tp.Partition] = slices.Clone(replicas)
}

// removeTopic forgets a topic and all its partition and replica state.
func (cc *controllerContext) removeTopic(topic string) {
	for p, replicas := range cc.assignments[topic] {
		tp := kafka.TopicPartition{Topic: topic, Partition: p}
		delete(cc.leadership, tp)
		delete(cc.adding, tp)
		delete(cc.removing, tp)
		delete(cc.partitionStates, tp)
		for _, r := range replicas {
			delete(cc.replicaStates, PartitionReplica{tp, r})
			cc.forgetOfflineReplica(r, tp)
		}
	}
	delete(cc.assignments, topic)
	delete(cc.topicIDs, topic)
	delete(cc.topicsToBeDeleted, topic)
	delete(cc.topicsWithDeletionStarted, topic)
	delete(cc.topicsIneligibleForDeletion, topic)
}

// addTopicAssignments records each topic's id and each partition's replicas and
// reassignment sets, and returns the partitions, sorted.
func (cc *controllerContext) addTopicAssignments(assignments map[string]TopicAssignment) []kafka.TopicPartition {
	var tps []kafka.TopicPartition
	for topic, a := range assignments {
		cc.topicIDs[topic] = a.TopicID
		for p, replicas := range a.Partitions {
			tp := kafka.TopicPartition{Topic: topic, Partition: p}
			cc.setAssignment(tp, replicas)
			cc.setReassignmentSets(tp, a.Adding[p], a.Removing[p])
			tps = append(tps, tp)
		}
	}
	kafka.SortPartitions(tps)
	return tps
}

// setReassignmentSets records tp's adding and removing replicas (empty: no reassignment).
func (cc *controllerContext) setReassignmentSets(tp kafka.TopicPartition, adding, removing []int32) {
	if len(adding) > 0 {
		cc.adding[tp] = slices.Clone(adding)
	} else {
		delete(cc.adding, tp)
	}
	if len(removing) > 0 {
		cc.removing[tp] = slices.Clone(removing)
	} else {
		delete(cc.removing, tp)
	}
}

// isBeingReassigned reports whether tp has a reassignment in progress.
func (cc *controllerContext) isBeingReassigned(tp kafka.TopicPartition) bool {
	return len(cc.adding[tp]) > 0 || len(cc.removing[tp]) > 0
}

// topicBeingReassigned reports whether any partition of topic is being reassigned.
func (cc *controllerContext) topicBeingReassigned(topic string) bool {
	for p := range cc.assignments[topic] {
		if cc.isBeingReassigned(kafka.TopicPartition{Topic: topic, Partition: p}) {
			return true
		}
	}
	return false
}

// topicAssignment returns the topic's full assignment as the znode holds it.
func (cc *controllerContext) topicAssignment(topic string) TopicAssignment {
	a := TopicAssignment{TopicID: cc.topicIDs[topic], Partitions: map[int32][]int32{},
		Adding: map[int32][]int32{}, Removing: map[int32][]int32{}}
	for p, replicas := range cc.assignments[topic] {
		tp := kafka.TopicPartition{Topic: topic, Partition: p}
		a.Partitions[p] = slices.Clone(replicas)
		if r := cc.adding[tp]; len(r) > 0 {
			a.Adding[p] = slices.Clone(r)
		}
		if r := cc.removing[tp]; len(r) > 0 {
			a.Removing[p] = slices.Clone(r)
		}
	}
	return a
}

// isQueuedForDeletion reports whether topic is marked for deletion.
func (cc *controllerContext) isQueuedForDeletion(topic string) bool {
	_, ok := cc.topicsToBeDeleted[topic]
	return ok
}

// replicasOfTopic returns every replica of topic, sorted.
func (cc *controllerContext) replicasOfTopic(topic string) []PartitionReplica {
	var out []PartitionReplica
	for _, tp := range cc.partitionsOf(topic) {
		for _, r := range cc.replicas(tp) {
			out = append(out, PartitionReplica{tp, r})
		}
	}
	return out
}

// replicasInState returns the replicas of topic in state s.
func (cc *controllerContext) replicasInState(topic string, s ReplicaState) []PartitionReplica {
	return slices.DeleteFunc(cc.replicasOfTopic(topic), func(r PartitionReplica) bool { return cc.replicaStates[r] != s })
}

// allPartitions returns every known partition, sorted by topic then partition.
func (cc *controllerContext) allPartitions() []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for topic, parts := range cc.assignments {
		for p := range parts {
			out = append(out, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	kafka.SortPartitions(out)
	return out
}

// partitionsOf returns the partitions of topic, sorted.
func (cc *controllerContext) partitionsOf(topic string) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(cc.assignments[topic]))
	for p := range cc.assignments[topic] {
		out = append(out, kafka.TopicPartition{Topic: topic, Partition: p})
	}
	kafka.SortPartitions(out)
	return out
}

// replicasOnBrokers returns every replica hosted by one of the brokers, sorted.
func (cc *controllerContext) replicasOnBrokers(brokers []int32) []PartitionReplica {
	var out []PartitionReplica
	for _, tp := range cc.allPartitions() {
		for _, r := range cc.replicas(tp) {
			if contains(brokers, r) {
				out = append(out, PartitionReplica{tp, r})
			}
		}
	}
	return out
}

// partitionsWithOfflineLeader returns the partitions whose recorded leader is not live
// (isReplicaLive: its broker is gone or its log dir failed) and that are not already Offline
// or New, sorted.
func (cc *controllerContext) partitionsWithOfflineLeader() []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for tp, l := range cc.leadership {
		if _, deleting := cc.topicsToBeDeleted[tp.Topic]; deleting {
			continue
		}
		if !cc.isReplicaLive(l.Leader, tp) && cc.partitionStates[tp] == OnlinePartition {
			out = append(out, tp)
		}
	}
	kafka.SortPartitions(out)
	return out
}

// partitionsInStates returns the partitions in one of the given states, sorted, skipping
// topics queued for deletion.
func (cc *controllerContext) partitionsInStates(states ...PartitionState) []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for tp, s := range cc.partitionStates {
		if _, deleting := cc.topicsToBeDeleted[tp.Topic]; deleting {
			continue
		}
		if slices.Contains(states, s) {
			out = append(out, tp)
		}
	}
	kafka.SortPartitions(out)
	return out
}

// offlinePartitionCount is Kafka's OfflinePartitionsCount: partitions that are not Online
// (without leader), excluding topics queued for deletion.
func (cc *controllerContext) offlinePartitionCount() int {
	n := 0
	for tp := range cc.partitionStates {
		if _, deleting := cc.topicsToBeDeleted[tp.Topic]; deleting {
			continue
		}
		if l, ok := cc.leadership[tp]; !ok || !cc.isReplicaLive(l.Leader, tp) {
			n++
		}
	}
	return n
}

// partitionCount returns the number of partitions of all topics.
func (cc *controllerContext) partitionCount() int {
	n := 0
	for _, parts := range cc.assignments {
		n += len(parts)
	}
	return n
}
