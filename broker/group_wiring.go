package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"samsa/broker/group"
	"samsa/broker/record"
	"samsa/broker/replica"
	"samsa/kafka"
)

// startGroupCoordinator creates the group coordinator over the
// __consumer_offsets partitions this broker leads.
func (b *Broker) startGroupCoordinator() {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	cfg := group.DefaultConfig()
	cfg.NumPartitions = b.cfg.OffsetsTopicNumPartitions
	cfg.MinSessionTimeout = ms(int64(b.cfg.GroupMinSessionTimeoutMs))
	cfg.MaxSessionTimeout = ms(int64(b.cfg.GroupMaxSessionTimeoutMs))
	cfg.InitialRebalanceDelay = ms(int64(b.cfg.GroupInitialRebalanceDelayMs))
	cfg.MaxSize = b.cfg.GroupMaxSize
	cfg.OffsetsRetention = time.Duration(b.cfg.OffsetsRetentionMinutes) * time.Minute
	cfg.OffsetsRetentionCheck = ms(b.cfg.OffsetsRetentionCheckIntervalMs)
	cfg.OffsetsCommitTimeout = ms(int64(b.cfg.OffsetsCommitTimeoutMs))
	cfg.OffsetMetadataMaxBytes = int(b.cfg.OffsetMetadataMaxBytes)
	cfg.LoadBufferSize = int(b.cfg.OffsetsLoadBufferSize)
	cfg.CompressionCodec = int8(b.cfg.OffsetsTopicCompressionCodec)
	cfg.StormCount = int(b.cfg.GroupRebalanceStormCount)
	cfg.StormWindow = ms(b.cfg.GroupRebalanceStormWindowMs)
	cfg.HistorySize = int(b.cfg.GroupRebalanceHistorySize)
	b.groups = group.NewCoordinator(group.Options{
		Config:      cfg,
		Log:         offsetLog{b: b},
		Logger:      b.opts.Logger.WithField("broker", b.ID()),
		OnRebalance: b.countRebalance,
		OnGroupGone: b.dropRebalanceCounters,
	})
	b.txnOffsets = b.groups
}

// groupLeadershipChanged tells the coordinator about __consumer_offsets
// partitions this broker started or stopped leading (Kafka's
// onLeadershipChange callback of becomeLeaderOrFollower).
func (b *Broker) groupLeadershipChanged(states []replica.PartitionState, results map[kafka.TopicPartition]error) {
	if b.groups == nil {
		return
	}
	for _, ps := range states {
		if ps.Topic != consumerOffsetsTopic || results[ps.TopicPartition] != nil {
			continue
		}
		if ps.Leader == b.ID() {
			b.groups.BecomeLeader(ps.Partition, ps.LeaderEpoch)
		} else {
			b.groups.Resign(ps.Partition, ps.LeaderEpoch)
		}
	}
}

// offsetLog implements group.OffsetLog over the replica manager.
type offsetLog struct{ b *Broker }

func (o offsetLog) tp(p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: consumerOffsetsTopic, Partition: p}
}

// groupErr maps replica errors onto the coordinator's sentinels.
func groupErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, replica.ErrNotLeader), errors.Is(err, replica.ErrUnknownPartition),
		errors.Is(err, replica.ErrShuttingDown), errors.Is(err, replica.ErrOffline):
		// Kafka's storeOffsets answers NOT_COORDINATOR for NOT_LEADER_OR_FOLLOWER and
		// KAFKA_STORAGE_ERROR (an offsets partition in a failed log dir).
		return fmt.Errorf("%w: %w", group.ErrNotLeader, err)
	case errors.Is(err, replica.ErrNotEnoughReplicas), errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend):
		return fmt.Errorf("%w: %w", group.ErrNotEnoughReplicas, err)
	case errors.Is(err, replica.ErrTimeout):
		return fmt.Errorf("%w: %w", group.ErrTimeout, err)
	case errors.Is(err, record.ErrTooLarge):
		return fmt.Errorf("%w: %w", group.ErrRecordTooLarge, err)
	}
	return err
}

// Append implements group.OffsetLog with acks=all (offsets.commit.required.acks).
func (o offsetLog) Append(ctx context.Context, partition int32, batch []byte) (int64, error) {
	b := o.b
	acks := b.cfg.OffsetsCommitRequiredAcks
	if acks != 1 {
		acks = -1
	}
	res, err := b.replicas.AppendAsLeader(o.tp(partition), batch, acks)
	if err != nil {
		return 0, groupErr(err)
	}
	if acks == -1 {
		deadline := b.opts.Now().Add(time.Duration(b.cfg.OffsetsCommitTimeoutMs) * time.Millisecond)
		if err := b.replicas.WaitReplicated(ctx, o.tp(partition), res.LastOffset+1, deadline); err != nil {
			return 0, fmt.Errorf("%w: %w", group.ErrAppended, groupErr(err))
		}
	}
	return res.BaseOffset, nil
}

// ReadFrom implements group.OffsetLog.
func (o offsetLog) ReadFrom(partition int32, offset int64, maxBytes int) (group.ReadResult, error) {
	lr, err := o.b.replicas.ReadLocal(o.tp(partition), offset, maxBytes)
	if err != nil {
		return group.ReadResult{End: lr.LogEndOffset}, groupErr(err)
	}
	var buf []byte
	for _, g := range lr.Records {
		start := len(buf)
		buf = append(buf, make([]byte, g.Len)...)
		if _, err := g.File.ReadAt(buf[start:], g.Pos); err != nil {
			return group.ReadResult{}, fmt.Errorf("broker: read %s-%d: %w", consumerOffsetsTopic, partition, err)
		}
	}
	return group.ReadResult{Batches: buf, End: lr.LogEndOffset}, nil
}
