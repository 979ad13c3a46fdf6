package storage

import (
	"testing"

	"samsa/kafka"
)

func TestStorageTopicPartitionDirNames(t *testing.T) {
	for _, c := range []struct {
		name string
		tp   kafka.TopicPartition
		ok   bool
	}{
		{"orders-0", kafka.TopicPartition{Topic: "orders", Partition: 0}, true},
		{"my-topic-12", kafka.TopicPartition{Topic: "my-topic", Partition: 12}, true},
		{"__consumer_offsets-49", kafka.TopicPartition{Topic: "__consumer_offsets", Partition: 49}, true},
		{"a.b-3", kafka.TopicPartition{Topic: "a.b", Partition: 3}, true},
		{"orders", kafka.TopicPartition{}, false},
		{"orders-", kafka.TopicPartition{}, false},
		{"-1", kafka.TopicPartition{}, false},
		{"orders--1", kafka.TopicPartition{Topic: "orders-", Partition: 1}, true}, // "orders-" is a legal topic
		{"orders-+1", kafka.TopicPartition{}, false},
		{"orders-x", kafka.TopicPartition{}, false},
		{"orders-99999999999", kafka.TopicPartition{}, false},
	} {
		tp, err := ParseTopicPartitionDir(c.name)
		if (err == nil) != c.ok || tp != c.tp {
			t.Errorf("ParseTopicPartitionDir(%q) = %v, %v", c.name, tp, err)
		}
		if c.ok && tp.String() != c.name {
			t.Errorf("%v.String() = %q", tp, tp.String())
		}
	}
}

func TestStorageSegmentFileNames(t *testing.T) {
	if got := segmentFileName("/d", 368769, LogFileSuffix); got != "/d/00000000000000368769.log" {
		t.Fatalf("got %q", got)
	}
	for _, c := range []struct {
		name   string
		base   int64
		suffix string
		ok     bool
	}{
		{"00000000000000000000.log", 0, ".log", true},
		{"00000000000000368769.timeindex", 368769, ".timeindex", true},
		{"00000000000000000042.log.deleted", 42, ".log.deleted", true},
		{"0000000000000000042.log", 0, "", false},
		{"0000000000000000004x.log", 0, "", false},
		{"leader-epoch-checkpoint", 0, "", false},
		{"99999999999999999999.log", 0, "", false}, // overflows int64
	} {
		base, suffix, ok := parseSegmentFileName(c.name)
		if ok != c.ok || base != c.base || suffix != c.suffix {
			t.Errorf("parseSegmentFileName(%q) = %d, %q, %v", c.name, base, suffix, ok)
		}
	}
}

// DefaultConfig holds Kafka 2.8's defaults (LogConfig / KafkaConfig).
func TestStorageDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"segment.bytes", int64(c.SegmentBytes), 1073741824},
		{"segment.ms", c.SegmentMs, 604800000},
		{"index.interval.bytes", int64(c.IndexIntervalBytes), 4096},
		{"segment.index.bytes", int64(c.SegmentIndexBytes), 10485760},
		{"retention.ms", c.RetentionMs, 604800000},
		{"retention.bytes", c.RetentionBytes, -1},
		{"max.message.bytes", int64(c.MaxMessageBytes), 1048588},
		{"flush.messages", c.FlushMessages, 9223372036854775807},
		{"flush.ms", c.FlushMs, 9223372036854775807},
		{"delete.retention.ms", c.DeleteRetentionMs, 86400000},
		{"file.delete.delay.ms", c.FileDeleteDelayMs, 60000},
		{"message.timestamp.difference.max.ms", c.MessageTimestampDifferenceMaxMs, 9223372036854775807},
	} {
		if f.got != f.want {
			t.Errorf("%s = %d, want %d", f.name, f.got, f.want)
		}
	}
	if c.CleanupPolicy != CleanupDelete || c.MessageTimestampType != CreateTime || c.Preallocate || c.MinCleanableRatio != 0.5 {
		t.Errorf("policy %v, timestamp type %v, preallocate %v, ratio %v", c.CleanupPolicy, c.MessageTimestampType, c.Preallocate, c.MinCleanableRatio)
	}
	bad := c
	bad.SegmentBytes = 1
	if bad.Validate() == nil {
		t.Error("segment.bytes 1 accepted")
	}
}
