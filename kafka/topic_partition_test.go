package kafka

import (
	"fmt"
	"slices"
	"testing"
)

func TestTopicPartitionString(t *testing.T) {
	for _, c := range []struct {
		tp   TopicPartition
		want string
	}{
		{TopicPartition{"foo", 0}, "foo-0"},
		{TopicPartition{"my-topic", 12}, "my-topic-12"},
		{TopicPartition{"", 3}, "-3"},
		{TopicPartition{"t", -1}, "t--1"},
		{TopicPartition{"t", 2147483647}, "t-2147483647"},
	} {
		if got := c.tp.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.tp, got, c.want)
		}
		if got := fmt.Sprint(c.tp); got != c.want {
			t.Errorf("fmt.Sprint(%#v) = %q, want %q", c.tp, got, c.want)
		}
	}
}

func TestSortPartitions(t *testing.T) {
	tps := []TopicPartition{{"b", 0}, {"a", 10}, {"a", 2}, {"a-1", 0}, {"B", 5}, {"a", -1}}
	SortPartitions(tps)
	want := []TopicPartition{{"B", 5}, {"a", -1}, {"a", 2}, {"a", 10}, {"a-1", 0}, {"b", 0}}
	if !slices.Equal(tps, want) {
		t.Fatalf("sorted %v, want %v", tps, want)
	}
	if ComparePartitions(TopicPartition{"a", 1}, TopicPartition{"a", 1}) != 0 {
		t.Fatal("equal partitions must compare 0")
	}
}
