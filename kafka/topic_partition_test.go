package kafka

import (
	"fmt"
	"slices"
	"strings"
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

// offsetNoString embeds TopicPartition without a String of its own: fmt
// prints only the promoted one.
type offsetNoString struct {
	TopicPartition
	Offset   int64
	Metadata string
}

// offsetWithString is the same struct with the String every embedder has.
type offsetWithString struct {
	TopicPartition
	Offset   int64
	Metadata string
	Err      error
	Next     *offsetWithString
}

func (o offsetWithString) String() string { return FieldsString(o) }

func TestTopicPartitionFieldsString(t *testing.T) {
	tp := TopicPartition{"orders", 3}
	// The problem: the promoted String hides the other fields.
	if got := fmt.Sprintf("%+v", offsetNoString{tp, 42, "m"}); got != "orders-3" {
		t.Fatalf("without its own String: %q", got)
	}
	o := offsetWithString{TopicPartition: tp, Offset: 42, Metadata: "m", Err: fmt.Errorf("boom")}
	want := "{TopicPartition:orders-3 Offset:42 Metadata:m Err:boom Next:<nil>}"
	for verb, got := range map[string]string{
		"%v": fmt.Sprintf("%v", o), "%+v": fmt.Sprintf("%+v", o), "%s": fmt.Sprintf("%s", o),
		"pointer %v": fmt.Sprintf("%v", &o), "slice %v": fmt.Sprintf("%v", []offsetWithString{o}),
	} {
		if strings.Trim(got, "[]") != want {
			t.Errorf("%s: %q, want %q", verb, got, want)
		}
	}
	// A nested embedder prints through its own String.
	outer := offsetWithString{TopicPartition: TopicPartition{"a", 0}, Next: &o}
	if got, want := outer.String(), "{TopicPartition:a-0 Offset:0 Metadata: Err:<nil> Next:"+want+"}"; got != want {
		t.Errorf("nested: %q, want %q", got, want)
	}
	if got := FieldsString(7); got != "7" {
		t.Errorf("FieldsString(7) = %q", got)
	}
	if got := FieldsString((*offsetWithString)(nil)); got != "(*kafka.offsetWithString)(nil)" {
		t.Errorf("nil pointer: %q", got)
	}
}
