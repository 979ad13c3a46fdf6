package zkconsumer

import "sort"
import "samsa/kafka"

// RebalanceListener is told about ownership changes (Kafka's
// ConsumerRebalanceListener, set with Config.RebalanceListener).
//
// Both methods run on the rebalance goroutine, which waits for them: they
// must return promptly and must not call Close (it waits for that
// goroutine). They may call CommitOffsets and Owned. A rebalance attempt
// that fails and is retried calls them again.
type RebalanceListener interface {
	// BeforeReleasingPartitions is called during a rebalance with the
	// partitions this consumer owns (topic → ascending partitions), after
	// the wait for handed-out messages (rebalance.processing.wait.ms) and
	// before the automatic commit of processed offsets and the deletion of
	// the owner znodes, so the application can commit its own work. Not
	// called when nothing is owned, nor by Close.
	BeforeReleasingPartitions(owned map[string][]int32)
	// BeforeStartingFetchers is called after this consumer claimed its
	// partitions and before their fetchers start, with its consumer id and
	// the assignment of the whole group (every member's threads; the
	// owner znodes hold ThreadID.String()). It must not modify assignment.
	BeforeStartingFetchers(consumerID string, assignment Assignment)
}

// ownedByTopic groups tps by topic, partitions ascending.
func ownedByTopic(tps []kafka.TopicPartition) map[string][]int32 {
	out := make(map[string][]int32)
	for _, tp := range tps {
		out[tp.Topic] = append(out[tp.Topic], tp.Partition)
	}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	}
	return out
}
