package config

import (
	"fmt"
	"regexp"
)

var throttledReplicaRE = regexp.MustCompile(`^([0-9]+:[0-9]+)?$`)

// throttledReplicas is Kafka's ThrottledReplicaListValidator: "*" or a list
// of partition:broker pairs.
var throttledReplicas = funcValidator{
	desc: "[partitionId]:[brokerId],[partitionId]:[brokerId],... or *",
	fn: func(v any) error {
		list, _ := v.([]string)
		if len(list) == 1 && list[0] == "*" {
			return nil
		}
		for _, s := range list {
			if !throttledReplicaRE.MatchString(s) {
				return fmt.Errorf("must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
			}
		}
		return nil
	},
}

// TopicKeys is the table of topic-level keys (Kafka 2.8 LogConfig), stored
// in /config/topics/<topic>. Each key's default is the current value of its
// Synonym broker key (for retention.ms, segment.ms, segment.jitter.ms and
// flush.ms the resolved value, see Broker.LogRetentionMs and friends); Default
// is the value for the stock broker configuration. Callers must not modify
// it.
var TopicKeys = []Key{
	{Name: "cleanup.policy", Field: "CleanupPolicy", Type: TypeList, Default: "delete", Valid: oneOf("compact", "delete"), Synonym: "log.cleanup.policy", Doc: "delete (by age and size), compact (keep the last value per key) or both."},
	{Name: "compression.type", Field: "CompressionType", Type: TypeString, Default: "producer", Valid: oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), Synonym: "compression.type", Doc: "Compression of stored batches; producer keeps the producer's codec."},
	{Name: "delete.retention.ms", Field: "DeleteRetentionMs", Type: TypeLong, Default: "86400000", Valid: atLeast(0), Synonym: "log.cleaner.delete.retention.ms", Doc: "How long tombstones stay in a compacted topic."},
	{Name: "file.delete.delay.ms", Field: "FileDeleteDelayMs", Type: TypeLong, Default: "60000", Valid: atLeast(0), Synonym: "log.segment.delete.delay.ms", Doc: "Delay before a deleted segment's files are removed."},
	{Name: "flush.messages", Field: "FlushMessages", Type: TypeLong, Default: longMax, Valid: atLeast(0), Synonym: "log.flush.interval.messages", Doc: "Messages between two fsyncs."},
	{Name: "flush.ms", Field: "FlushMs", Type: TypeLong, Default: longMax, Valid: atLeast(0), Synonym: "log.flush.interval.ms", Doc: "Time between two fsyncs."},
	{Name: "follower.replication.throttled.replicas", Field: "FollowerReplicationThrottledReplicas", Type: TypeList, Default: "", Valid: throttledReplicas, Doc: "Replicas throttled on the follower side." + noEffect},
	{Name: "index.interval.bytes", Field: "IndexIntervalBytes", Type: TypeInt, Default: "4096", Valid: atLeast(0), Synonym: "log.index.interval.bytes", Doc: "Bytes between two offset index entries."},
	{Name: "leader.replication.throttled.replicas", Field: "LeaderReplicationThrottledReplicas", Type: TypeList, Default: "", Valid: throttledReplicas, Doc: "Replicas throttled on the leader side." + noEffect},
	{Name: "max.compaction.lag.ms", Field: "MaxCompactionLagMs", Type: TypeLong, Default: longMax, Valid: atLeast(1), Synonym: "log.cleaner.max.compaction.lag.ms", Doc: "Largest age of a message before it must be compacted."},
	{Name: "max.message.bytes", Field: "MaxMessageBytes", Type: TypeInt, Default: "1048588", Valid: atLeast(0), Synonym: "message.max.bytes", Doc: "Largest record batch (after compression) accepted."},
	{Name: "message.downconversion.enable", Field: "MessageDownconversionEnable", Type: TypeBool, Default: "true", Synonym: "log.message.downconversion.enable", Doc: "Down-convert for old fetch versions."},
	{Name: "message.format.version", Field: "MessageFormatVersion", Type: TypeString, Default: "2.8-IV1", Synonym: "log.message.format.version", Doc: "Message format version; Samsa stores record batch v2 whatever it says."},
	{Name: "message.timestamp.difference.max.ms", Field: "MessageTimestampDifferenceMaxMs", Type: TypeLong, Default: longMax, Valid: atLeast(0), Synonym: "log.message.timestamp.difference.max.ms", Doc: "Largest difference between a CreateTime timestamp and the broker's clock."},
	{Name: "message.timestamp.type", Field: "MessageTimestampType", Type: TypeString, Default: "CreateTime", Valid: oneOf("CreateTime", "LogAppendTime"), Synonym: "log.message.timestamp.type", Doc: "CreateTime (producer's) or LogAppendTime (broker's)."},
	{Name: "min.cleanable.dirty.ratio", Field: "MinCleanableDirtyRatio", Type: TypeDouble, Default: "0.5", Valid: between(0, 1), Synonym: "log.cleaner.min.cleanable.ratio", Doc: "Dirty ratio above which the log is compacted."},
	{Name: "min.compaction.lag.ms", Field: "MinCompactionLagMs", Type: TypeLong, Default: "0", Valid: atLeast(0), Synonym: "log.cleaner.min.compaction.lag.ms", Doc: "Least age of a message before it may be compacted."},
	{Name: "min.insync.replicas", Field: "MinInsyncReplicas", Type: TypeInt, Default: "1", Valid: atLeast(1), Synonym: "min.insync.replicas", Doc: "Least in-sync replicas for an acks=all produce to succeed."},
	{Name: "preallocate", Field: "Preallocate", Type: TypeBool, Default: "false", Synonym: "log.preallocate", Doc: "Preallocate segment files."},
	{Name: "retention.bytes", Field: "RetentionBytes", Type: TypeLong, Default: "-1", Synonym: "log.retention.bytes", Doc: "Largest partition size before old segments are deleted; -1 is unlimited."},
	{Name: "retention.ms", Field: "RetentionMs", Type: TypeLong, Default: "604800000", Valid: atLeast(-1), Synonym: "log.retention.ms", Doc: "Age after which segments are deleted; -1 is unlimited."},
	{Name: "segment.bytes", Field: "SegmentBytes", Type: TypeInt, Default: "1073741824", Valid: atLeast(14), Synonym: "log.segment.bytes", Doc: "Segment size at which the log rolls."},
	{Name: "segment.index.bytes", Field: "SegmentIndexBytes", Type: TypeInt, Default: "10485760", Valid: atLeast(0), Synonym: "log.index.size.max.bytes", Doc: "Size of a segment's index files."},
	{Name: "segment.jitter.ms", Field: "SegmentJitterMs", Type: TypeLong, Default: "0", Valid: atLeast(0), Synonym: "log.roll.jitter.ms", Doc: "Random jitter subtracted from segment.ms."},
	{Name: "segment.ms", Field: "SegmentMs", Type: TypeLong, Default: "604800000", Valid: atLeast(1), Synonym: "log.roll.ms", Doc: "Segment age at which the log rolls."},
	{Name: "unclean.leader.election.enable", Field: "UncleanLeaderElectionEnable", Type: TypeBool, Default: "false", Synonym: "unclean.leader.election.enable", Doc: "Allow an out-of-sync replica to become leader."},
}
