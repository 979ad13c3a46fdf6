package kafka

// TopicPartition, the one partition name of every tier, with Kafka's text form and order.

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
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

// FieldsString formats v, a struct (or a pointer to one) that embeds
// TopicPartition, as %+v would if the embedded String were not promoted:
// "{TopicPartition:t-0 Offset:5 Metadata:}". A struct that embeds
// TopicPartition gets its String method, so fmt prints such a value as
// "t-0" alone and a failure message or log loses every other field; the
// struct's own String returns FieldsString of itself (tools/lint checks
// that each embedder has one). Each field prints as %+v prints it, so an
// embedded TopicPartition still reads "t-0" and, as with %+v, unexported
// fields print without their methods. Anything but a struct is printed
// with %#v, which never calls String (no recursion).
func FieldsString(v any) string {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return fmt.Sprintf("%#v", v)
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := range rv.NumField() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%+v", rv.Type().Field(i).Name, rv.Field(i))
	}
	b.WriteByte('}')
	return b.String()
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
