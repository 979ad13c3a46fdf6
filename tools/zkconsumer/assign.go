package zkconsumer

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"samsa/kafka"
)

// Partition assignment strategies (partition.assignment.strategy).
const (
	StrategyRange      = "range"
	StrategyRoundRobin = "roundrobin"
)

// MaxStreamsPerTopic bounds the stream count a member may register for one
// topic. Registrations come from ZooKeeper and are untrusted: a larger count
// fails the assignment instead of allocating without bound.
const MaxStreamsPerTopic = 4096

// ErrSubscriptionsDiffer is returned by the roundrobin assignor when the
// members of a group do not all subscribe to the same topics with the same
// number of streams, which Kafka 0.8.2 requires for roundrobin.
var ErrSubscriptionsDiffer = errors.New("zkconsumer: roundrobin assignment requires every consumer in the group to subscribe to the same topics with the same stream count")

// GroupState is the input of an assignor, read from ZooKeeper by every
// member on its own (there is no coordinator).
type GroupState struct {
	// Members maps each registered consumer id to its subscription resolved
	// to topics: topic → number of streams. Wildcard subscriptions are
	// already matched against the topic list.
	Members map[string]map[string]int
	// Partitions maps topic → its partition ids, in any order. A subscribed
	// topic missing here has no partitions (it does not exist yet).
	Partitions map[string][]int32
}

// Assignment maps each partition to the consumer thread that owns it.
// Partitions that no thread gets are absent.
type Assignment map[kafka.TopicPartition]ThreadID

// Of returns the part of a that belongs to consumer.
func (a Assignment) Of(consumer string) Assignment {
	out := make(Assignment)
	for tp, th := range a {
		if th.Consumer == consumer {
			out[tp] = th
		}
	}
	return out
}

// String renders a sorted by topic and partition, one "[t,p]->thread" per
// entry, for logs and examples.
func (a Assignment) String() string {
	tps := make([]kafka.TopicPartition, 0, len(a))
	for tp := range a {
		tps = append(tps, tp)
	}
	kafka.SortPartitions(tps)
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = topicAndPartition(tp) + "->" + a[tp].String()
	}
	return strings.Join(parts, " ")
}

// Assignor computes the whole group's assignment. It is a pure function:
// every member calls it on the same GroupState and gets the same answer.
type Assignor func(GroupState) (Assignment, error)

// AssignorFor returns the assignor of a partition.assignment.strategy.
// Kafka silently falls back to range for unknown names; Samsa reports them.
func AssignorFor(strategy string) (Assignor, error) {
	switch strategy {
	case StrategyRange, "":
		return AssignRange, nil
	case StrategyRoundRobin:
		return AssignRoundRobin, nil
	}
	return nil, fmt.Errorf("zkconsumer: unknown partition.assignment.strategy %q (want range or roundrobin)", strategy)
}

// threadsPerTopic returns, per topic, the thread ids of every member that
// subscribes to it, sorted as Kafka sorts ConsumerThreadIds (ZkUtils
// getConsumersPerTopic).
func threadsPerTopic(g GroupState) (map[string][]ThreadID, error) {
	out := make(map[string][]ThreadID)
	for consumer, sub := range g.Members {
		for topic, n := range sub {
			if n > MaxStreamsPerTopic {
				return nil, fmt.Errorf("zkconsumer: consumer %s registers %d streams for topic %s (limit %d)", consumer, n, topic, MaxStreamsPerTopic)
			}
			for i := 0; i < n; i++ {
				out[topic] = append(out[topic], ThreadID{Consumer: consumer, Thread: i})
			}
		}
	}
	names := make(map[ThreadID]string)
	for _, ths := range out {
		for _, th := range ths {
			if _, ok := names[th]; !ok {
				names[th] = th.String()
			}
		}
		sort.Slice(ths, func(i, j int) bool { return javaStringLess(names[ths[i]], names[ths[j]]) })
	}
	return out, nil
}

// sortedPartitions returns topic's partitions in ascending numeric order,
// without duplicates.
func sortedPartitions(g GroupState, topic string) []int32 {
	ps := slices.Clone(g.Partitions[topic])
	slices.Sort(ps)
	return slices.Compact(ps)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AssignRange is Kafka's RangeAssignor. Per topic, the partitions in
// numeric order are cut into contiguous ranges, one per subscribing thread
// in thread-id order; the first len(P) % len(T) threads get one extra
// partition, and threads past the end get none.
func AssignRange(g GroupState) (Assignment, error) {
	threads, err := threadsPerTopic(g)
	if err != nil {
		return nil, err
	}
	out := make(Assignment)
	for _, topic := range sortedKeys(threads) {
		ths := threads[topic]
		parts := sortedPartitions(g, topic)
		per, extra := len(parts)/len(ths), len(parts)%len(ths)
		for i, th := range ths {
			start := per*i + min(i, extra)
			n := per
			if i < extra {
				n++
			}
			for _, p := range parts[start : start+n] {
				out[kafka.TopicPartition{Topic: topic, Partition: p}] = th
			}
		}
	}
	return out, nil
}

// AssignRoundRobin is Kafka's RoundRobinAssignor (0.8.2+). All thread ids
// form one list sorted by their text; all partitions of all subscribed
// topics are sorted by the Java hash code of "[topic,partition]" (signed,
// stable); partitions are then dealt to the threads in turn. Every member
// must subscribe to the same topics with the same stream count, otherwise
// the error wraps ErrSubscriptionsDiffer (Kafka 0.8.2–0.10.1 rule; with
// identical subscriptions Kafka 0.10.2+ computes the same answer).
//
// Partitions with equal hash codes keep the order (topic name, then
// partition number); Kafka keeps the iteration order of a Scala map there,
// which is not specified.
func AssignRoundRobin(g GroupState) (Assignment, error) {
	threads, err := threadsPerTopic(g)
	if err != nil {
		return nil, err
	}
	out := make(Assignment)
	topics := sortedKeys(threads)
	if len(topics) == 0 {
		return out, nil
	}
	head := threads[topics[0]]
	for _, topic := range topics[1:] {
		if !slices.Equal(threads[topic], head) {
			return nil, fmt.Errorf("%w: topic %s has streams %v but topic %s has streams %v",
				ErrSubscriptionsDiffer, topic, threads[topic], topics[0], head)
		}
	}
	var tps []kafka.TopicPartition
	for _, topic := range topics {
		for _, p := range sortedPartitions(g, topic) {
			tps = append(tps, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	hashes := make(map[kafka.TopicPartition]int32, len(tps))
	for _, tp := range tps {
		hashes[tp] = javaStringHash(topicAndPartition(tp))
	}
	sort.SliceStable(tps, func(i, j int) bool { return hashes[tps[i]] < hashes[tps[j]] })
	for i, tp := range tps {
		out[tp] = head[i%len(head)]
	}
	return out, nil
}
