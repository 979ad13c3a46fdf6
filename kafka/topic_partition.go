package kafka

// TopicPartition, the one partition name of every tier, with Kafka's text form and order.

import (
	"cmp"
	"slices"
	"strconv"
)

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String returns "<topic>-<partition>", Kafka's TopicPartition.toString
// and the partition's log directory name.
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// ComparePartitions orders by topic, then partition number; it fits
// slices.SortFunc.
func ComparePartitions(a, b TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// SortPartitions sorts tps by topic, then partition number.
func SortPartitions(tps []TopicPartition) {
	slices.SortFunc(tps, ComparePartitions)
}
