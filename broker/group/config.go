package group

import (
	"time"

	"github.com/sirupsen/logrus"
)

// Config holds the broker settings the coordinator uses (Kafka's
// GroupConfig and OffsetConfig), in plain Go; the broker fills it from
// config.Broker.
type Config struct {
	NumPartitions            int32         // offsets.topic.num.partitions
	MinSessionTimeout        time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout        time.Duration // group.max.session.timeout.ms
	InitialRebalanceDelay    time.Duration // group.initial.rebalance.delay.ms
	MaxSize                  int32         // group.max.size
	OffsetsRetention         time.Duration // offsets.retention.minutes
	OffsetsRetentionCheck    time.Duration // offsets.retention.check.interval.ms
	OffsetsCommitTimeout     time.Duration // offsets.commit.timeout.ms
	OffsetMetadataMaxBytes   int           // offset.metadata.max.bytes
	LoadBufferSize           int           // offsets.load.buffer.size
	CompressionCodec         int8          // offsets.topic.compression.codec (record.Codec)
	NewMemberJoinTimeout     time.Duration // Kafka's fixed 5 minutes (KIP-394 pending and new members)
	RequestChannelSize       int           // buffer of each group's request channel
	LoadMaxDecompressedBytes int           // cap on one batch's decompressed records while loading
	StormCount               int           // samsa.group.rebalance.storm.count (0: detector off)
	StormWindow              time.Duration // samsa.group.rebalance.storm.window.ms
	HistorySize              int           // samsa.group.rebalance.history.size
}

// DefaultConfig returns Kafka 2.8's defaults.
func DefaultConfig() Config {
	return Config{
		NumPartitions:            50,
		MinSessionTimeout:        6 * time.Second,
		MaxSessionTimeout:        30 * time.Minute,
		InitialRebalanceDelay:    3 * time.Second,
		MaxSize:                  1<<31 - 1,
		OffsetsRetention:         7 * 24 * time.Hour,
		OffsetsRetentionCheck:    10 * time.Minute,
		OffsetsCommitTimeout:     5 * time.Second,
		OffsetMetadataMaxBytes:   4096,
		LoadBufferSize:           5 << 20,
		NewMemberJoinTimeout:     5 * time.Minute,
		RequestChannelSize:       64,
		LoadMaxDecompressedBytes: 64 << 20,
		StormCount:               5,
		StormWindow:              10 * time.Minute,
		HistorySize:              10,
	}
}

// Options configure NewCoordinator.
type Options struct {
	Config Config
	Log    OffsetLog          // required
	Clock  Clock              // nil: SystemClock
	Logger logrus.FieldLogger // nil: discard
	// OnRebalance, when set, is told about every rebalance as it starts
	// (the broker counts them per group and reason). It runs on the
	// group's goroutine and must not block or call the Coordinator.
	OnRebalance func(group string, r Rebalance)
	// OnGroupGone, when set, is told when a group that rebalanced at least
	// once leaves this coordinator (deleted, expired, or its partition
	// moved), so per-group series can be dropped. It runs on the group's
	// goroutine as it exits and must not block or call the Coordinator.
	OnGroupGone func(group string)
}
