package zkconsumer

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"samsa/kafka"
	"samsa/zkutil"
)

// fetchCommitted reads the committed offsets of tps: from ZooKeeper, from
// the group coordinator (OffsetFetch v1), or with dual commit the larger of
// both. -1 means nothing committed.
func (c *Connector) fetchCommitted(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
	out := make(map[kafka.TopicPartition]int64, len(tps))
	if len(tps) == 0 {
		return out, nil
	}
	useZK := c.cfg.OffsetsStorage == StorageZooKeeper || c.cfg.DualCommitEnabled
	for _, tp := range tps {
		out[tp] = -1
		if !useZK {
			continue
		}
		off, err := c.zk.GetConsumerOffset(c.cfg.GroupID, tp.Topic, tp.Partition)
		switch {
		case errors.Is(err, zkutil.ErrNoNode):
		case errors.Is(err, zkutil.ErrMalformed):
			c.log.WithError(err).WithField("topic", tp.Topic).WithField("partition", tp.Partition).Warn("ignoring malformed committed offset")
		case err != nil:
			return nil, fmt.Errorf("zkconsumer: read offset of %s: %w", topicAndPartition(tp), err)
		default:
			out[tp] = off
		}
	}
	if c.cfg.OffsetsStorage != StorageKafka {
		return out, nil
	}
	kafka, err := c.kafkaFetchOffsets(ctx, tps)
	if err != nil {
		return nil, err
	}
	for tp, off := range kafka {
		out[tp] = max(out[tp], off)
	}
	return out, nil
}

// CommitOffsets commits the offsets of the processed messages of every
// owned partition (Kafka's commitOffsets), retrying up to
// offsets.commit.max.retries times with offsets.channel.backoff.ms between
// attempts.
func (c *Connector) CommitOffsets(ctx context.Context) error {
	if c.isClosed() {
		return ErrClosed
	}
	return c.commit(ctx, 1+c.cfg.OffsetsCommitMaxRetries)
}

func (c *Connector) commit(ctx context.Context, attempts int) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 && !waitCtx(ctx, c.cfg.OffsetsChannelBackoff) {
			return errors.Join(err, ctx.Err())
		}
		if err = c.commitLocked(ctx); err == nil {
			return nil
		}
	}
	return err
}

// commitLocked writes every owned partition whose processed offset differs
// from the last one written. The caller holds commitMu.
func (c *Connector) commitLocked(ctx context.Context) error {
	c.mu.Lock()
	todo := make(map[kafka.TopicPartition]int64)
	states := make(map[kafka.TopicPartition]*partState)
	for tp, ps := range c.mu.owned {
		if ps.processed >= 0 && ps.processed != ps.committed {
			todo[tp] = ps.processed
			states[tp] = ps
		}
	}
	c.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	var done map[kafka.TopicPartition]int64
	var err error
	if c.cfg.OffsetsStorage == StorageKafka {
		done, err = c.kafkaCommit(ctx, todo)
		if c.cfg.DualCommitEnabled {
			for tp, off := range done {
				if zerr := c.zk.SetConsumerOffset(c.cfg.GroupID, tp.Topic, tp.Partition, off); zerr != nil {
					err = errors.Join(err, fmt.Errorf("zkconsumer: dual commit of %s: %w", topicAndPartition(tp), zerr))
				}
			}
		}
	} else {
		done = make(map[kafka.TopicPartition]int64, len(todo))
		for tp, off := range todo {
			if zerr := c.zk.SetConsumerOffset(c.cfg.GroupID, tp.Topic, tp.Partition, off); zerr != nil {
				err = errors.Join(err, fmt.Errorf("zkconsumer: commit offset of %s: %w", topicAndPartition(tp), zerr))
				continue
			}
			done[tp] = off
		}
	}
	c.mu.Lock()
	for tp, off := range done {
		states[tp].committed = off
	}
	c.mu.Unlock()
	if len(done) > 0 {
		if c.cfg.OffsetsStorage == StorageKafka {
			c.metrics.kafkaCommits.Mark(1)
		}
		if c.cfg.OffsetsStorage == StorageZooKeeper || c.cfg.DualCommitEnabled {
			c.metrics.zkCommits.Mark(1)
		}
		c.log.Debugf("committed offsets of %d partitions", len(done))
	}
	return err
}

// coordinator returns the Sarama client and the group's coordinator broker
// (FindCoordinator, Kafka's ConsumerMetadata request).
func (c *Connector) coordinator(ctx context.Context) (sarama.Client, *sarama.Broker, error) {
	client, _, err := c.saramaClients(ctx)
	if err != nil {
		return nil, nil, err
	}
	b, err := client.Coordinator(c.cfg.GroupID)
	if err != nil {
		return nil, nil, fmt.Errorf("zkconsumer: find coordinator of group %s: %w", c.cfg.GroupID, err)
	}
	return client, b, nil
}

// kafkaFetchOffsets sends OffsetFetch v1 to the coordinator.
func (c *Connector) kafkaFetchOffsets(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
	client, b, err := c.coordinator(ctx)
	if err != nil {
		return nil, err
	}
	req := &sarama.OffsetFetchRequest{Version: 1, ConsumerGroup: c.cfg.GroupID}
	for _, tp := range tps {
		req.AddPartition(tp.Topic, tp.Partition)
	}
	resp, err := b.FetchOffset(req)
	if err != nil {
		_ = client.RefreshCoordinator(c.cfg.GroupID)
		return nil, fmt.Errorf("zkconsumer: OffsetFetch v1: %w", err)
	}
	out := make(map[kafka.TopicPartition]int64, len(tps))
	for _, tp := range tps {
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		switch {
		case blk == nil:
			return nil, fmt.Errorf("zkconsumer: OffsetFetch v1: no answer for %s", topicAndPartition(tp))
		case errors.Is(blk.Err, sarama.ErrUnknownTopicOrPartition):
			out[tp] = -1
		case blk.Err != sarama.ErrNoError:
			if errors.Is(blk.Err, sarama.ErrNotCoordinatorForConsumer) {
				_ = client.RefreshCoordinator(c.cfg.GroupID)
			}
			return nil, fmt.Errorf("zkconsumer: OffsetFetch v1 %s: %w", topicAndPartition(tp), blk.Err)
		default:
			out[tp] = blk.Offset
		}
	}
	return out, nil
}

// kafkaCommit sends OffsetCommit v1 (generation -1, no member id: the old
// consumer commits outside any group generation) and returns the offsets
// that were accepted.
func (c *Connector) kafkaCommit(ctx context.Context, todo map[kafka.TopicPartition]int64) (map[kafka.TopicPartition]int64, error) {
	client, b, err := c.coordinator(ctx)
	if err != nil {
		return nil, err
	}
	req := &sarama.OffsetCommitRequest{Version: 1, ConsumerGroup: c.cfg.GroupID, ConsumerGroupGeneration: -1}
	for tp, off := range todo {
		req.AddBlock(tp.Topic, tp.Partition, off, sarama.ReceiveTime, "")
	}
	resp, err := b.CommitOffset(req)
	if err != nil {
		_ = client.RefreshCoordinator(c.cfg.GroupID)
		return nil, fmt.Errorf("zkconsumer: OffsetCommit v1: %w", err)
	}
	done := make(map[kafka.TopicPartition]int64, len(todo))
	var errs []error
	for tp, off := range todo {
		kerr, ok := resp.Errors[tp.Topic][tp.Partition]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("zkconsumer: OffsetCommit v1: no answer for %s", topicAndPartition(tp)))
		case kerr != sarama.ErrNoError:
			if errors.Is(kerr, sarama.ErrNotCoordinatorForConsumer) {
				_ = client.RefreshCoordinator(c.cfg.GroupID)
			}
			errs = append(errs, fmt.Errorf("zkconsumer: OffsetCommit v1 %s: %w", topicAndPartition(tp), kerr))
		default:
			done[tp] = off
		}
	}
	return done, errors.Join(errs...)
}
