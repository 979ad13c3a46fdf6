package storage

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// CleanupPolicy is Kafka's cleanup.policy: which of deletion and compaction
// run on a log.
type CleanupPolicy uint8

// Cleanup policies. CleanupDeleteCompact is "compact,delete".
const (
	CleanupDelete CleanupPolicy = iota
	CleanupCompact
	CleanupDeleteCompact
)

// Deletes reports whether retention by time or size applies.
func (p CleanupPolicy) Deletes() bool { return p == CleanupDelete || p == CleanupDeleteCompact }

// Compacts reports whether the cleaner compacts the log.
func (p CleanupPolicy) Compacts() bool { return p == CleanupCompact || p == CleanupDeleteCompact }

// String returns Kafka's spelling ("delete", "compact", "compact,delete").
func (p CleanupPolicy) String() string {
	switch p {
	case CleanupDelete:
		return "delete"
	case CleanupCompact:
		return "compact"
	case CleanupDeleteCompact:
		return "compact,delete"
	}
	return fmt.Sprintf("CleanupPolicy(%d)", uint8(p))
}

// TimestampType is Kafka's message.timestamp.type.
type TimestampType uint8

// Timestamp types.
const (
	CreateTime TimestampType = iota
	LogAppendTime
)

// String returns Kafka's spelling.
func (t TimestampType) String() string {
	if t == LogAppendTime {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// NoLimit is the "unlimited" value of the int64 settings (Kafka's Long.MAX_VALUE).
const NoLimit = math.MaxInt64

// Config holds the per-log settings (Kafka's LogConfig). The broker fills it
// from config.Topic; storage never reads configuration itself. Durations are in
// milliseconds as in Kafka. A Config is copied into a Log; change it with
// Log.SetConfig.
type Config struct {
	SegmentBytes       int32 // segment.bytes
	SegmentMs          int64 // segment.ms
	SegmentJitterMs    int64 // segment.jitter.ms
	IndexIntervalBytes int32 // index.interval.bytes
	SegmentIndexBytes  int32 // segment.index.bytes
	RetentionMs        int64 // retention.ms; negative: unlimited
	RetentionBytes     int64 // retention.bytes; negative: unlimited
	MaxMessageBytes    int32 // max.message.bytes (largest batch)
	FlushMessages      int64 // flush.messages
	FlushMs            int64 // flush.ms
	CleanupPolicy      CleanupPolicy
	DeleteRetentionMs  int64   // delete.retention.ms
	MinCleanableRatio  float64 // min.cleanable.dirty.ratio
	MinCompactionLagMs int64   // min.compaction.lag.ms
	MaxCompactionLagMs int64   // max.compaction.lag.ms
	FileDeleteDelayMs  int64   // file.delete.delay.ms
	// MessageTimestampType is message.timestamp.type.
	MessageTimestampType TimestampType
	// MessageTimestampDifferenceMaxMs is message.timestamp.difference.max.ms;
	// checked only with CreateTime.
	MessageTimestampDifferenceMaxMs int64
	Preallocate                     bool // preallocate
	// ProducerIDExpirationMs is the broker's transactional.id.expiration.ms:
	// a producer idle this long loses its state (Kafka 2.8). 0: the default.
	ProducerIDExpirationMs int64
}

// DefaultConfig returns Kafka 2.8's defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:                    1 << 30,
		SegmentMs:                       7 * 24 * 3600 * 1000,
		SegmentJitterMs:                 0,
		IndexIntervalBytes:              4096,
		SegmentIndexBytes:               10 << 20,
		RetentionMs:                     7 * 24 * 3600 * 1000,
		RetentionBytes:                  -1,
		MaxMessageBytes:                 1048588,
		FlushMessages:                   NoLimit,
		FlushMs:                         NoLimit,
		CleanupPolicy:                   CleanupDelete,
		DeleteRetentionMs:               24 * 3600 * 1000,
		MinCleanableRatio:               0.5,
		MinCompactionLagMs:              0,
		MaxCompactionLagMs:              NoLimit,
		FileDeleteDelayMs:               60000,
		MessageTimestampType:            CreateTime,
		MessageTimestampDifferenceMaxMs: NoLimit,
		Preallocate:                     false,
		ProducerIDExpirationMs:          DefaultProducerIDExpirationMs,
	}
}

// minSegmentBytes is Kafka's LegacyRecord.RECORD_OVERHEAD_V0 lower bound for
// segment.bytes (14); anything smaller could not hold a batch header anyway.
const minSegmentBytes = 14

// Validate reports the first setting storage cannot work with.
func (c Config) Validate() error {
	switch {
	case c.SegmentBytes < minSegmentBytes:
		return fmt.Errorf("storage: segment.bytes %d below %d", c.SegmentBytes, minSegmentBytes)
	case c.SegmentMs < 1:
		return fmt.Errorf("storage: segment.ms %d must be positive", c.SegmentMs)
	case c.SegmentJitterMs < 0:
		return fmt.Errorf("storage: segment.jitter.ms %d is negative", c.SegmentJitterMs)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("storage: index.interval.bytes %d is negative", c.IndexIntervalBytes)
	case c.SegmentIndexBytes < 0:
		return fmt.Errorf("storage: segment.index.bytes %d is negative", c.SegmentIndexBytes)
	case c.MaxMessageBytes < 0:
		return fmt.Errorf("storage: max.message.bytes %d is negative", c.MaxMessageBytes)
	case c.FlushMessages < 0 || c.FlushMs < 0:
		return fmt.Errorf("storage: flush.messages %d / flush.ms %d out of range", c.FlushMessages, c.FlushMs)
	case c.CleanupPolicy > CleanupDeleteCompact:
		return fmt.Errorf("storage: unknown cleanup policy %d", c.CleanupPolicy)
	case c.MinCleanableRatio < 0 || c.MinCleanableRatio > 1:
		return fmt.Errorf("storage: min.cleanable.dirty.ratio %v outside [0,1]", c.MinCleanableRatio)
	case c.FileDeleteDelayMs < 0:
		return fmt.Errorf("storage: file.delete.delay.ms %d is negative", c.FileDeleteDelayMs)
	case c.MessageTimestampType > LogAppendTime:
		return fmt.Errorf("storage: unknown message.timestamp.type %d", c.MessageTimestampType)
	}
	return nil
}

// randomSegmentJitter draws the per-segment roll jitter as Kafka's
// LogConfig.randomSegmentJitter: uniform in [0, min(jitter, segment.ms)).
func (c Config) randomSegmentJitter() int64 {
	if c.SegmentJitterMs <= 0 {
		return 0
	}
	return rand.Int64N(min(c.SegmentJitterMs, c.SegmentMs))
}
