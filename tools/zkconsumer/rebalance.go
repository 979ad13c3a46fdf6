package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"samsa/kafka"
	"samsa/zkutil"
)

// ErrRebalanceFailed is returned when every one of rebalance.max.retries
// attempts failed (Kafka's ConsumerRebalanceFailedException).
var ErrRebalanceFailed = errors.New("zkconsumer: rebalance failed after rebalance.max.retries attempts")

// errClaimConflict marks an attempt that found a partition still owned by
// another consumer.
var errClaimConflict = errors.New("zkconsumer: partition still owned by another consumer")

// syncedRebalance runs up to rebalance.max.retries attempts with
// rebalance.backoff.ms between them (Kafka's syncedRebalance).
func (c *Connector) syncedRebalance(ctx context.Context) error {
	var last error
	start := time.Now()
	defer c.resumeStreams() // paused by releaseAll
	for attempt := 1; attempt <= c.cfg.RebalanceMaxRetries; attempt++ {
		if c.isClosed() {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("zkconsumer: rebalance: %w", err)
		}
		c.log.Infof("rebalancing (attempt %d of %d)", attempt, c.cfg.RebalanceMaxRetries)
		err := c.rebalanceOnce(ctx)
		if err == nil {
			c.metrics.rebalance.UpdateSince(start)
			c.mu.Lock()
			c.mu.rebalances++
			c.mu.lastErr = nil
			c.mu.Unlock()
			return nil
		}
		last = err
		c.log.WithError(err).Infof("rebalance attempt %d failed; backing off %v", attempt, c.cfg.RebalanceBackoff)
		// Kafka stops the fetchers again (committing) before backing off.
		c.releaseAll(ctx, true)
		if attempt < c.cfg.RebalanceMaxRetries && !c.sleep(ctx, c.cfg.RebalanceBackoff) {
			if c.isClosed() {
				return ErrClosed
			}
			return fmt.Errorf("zkconsumer: rebalance: %w (last attempt: %w)", ctx.Err(), last)
		}
	}
	err := fmt.Errorf("%w (%d): last attempt: %w", ErrRebalanceFailed, c.cfg.RebalanceMaxRetries, last)
	c.mu.Lock()
	c.mu.lastErr = err
	c.mu.Unlock()
	return err
}

// rebalanceOnce is one attempt (Kafka's rebalance): check the registration
// and the brokers, stop fetching, commit, release, assign, claim, read the
// committed offsets and start fetching.
func (c *Connector) rebalanceOnce(ctx context.Context) error {
	group := c.cfg.GroupID
	if _, err := c.zk.GetConsumerRegistration(group, c.id); errors.Is(err, zkutil.ErrNoNode) {
		// Lost with a session whose re-registration failed, or deleted by
		// hand: register again rather than wait for a trigger that may
		// never come.
		if err := c.register(); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("zkconsumer: read own registration: %w", err)
	}
	brokers, err := c.zk.GetBrokerIDs()
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return fmt.Errorf("zkconsumer: read brokers: %w", err)
	}
	if len(brokers) == 0 {
		// Kafka: no brokers, watch /brokers/ids and keep what we have.
		c.log.Warn("no brokers found when trying to rebalance; watching /brokers/ids")
		if c.brokerWatch == nil {
			c.brokerWatch = c.zk.WatchChildren(zkutil.BrokerIDsPath(), c.trigger)
		}
		return nil
	}

	c.releaseAll(ctx, true)

	state, err := c.readGroup()
	if err != nil {
		return err
	}
	c.updateTopicWatches(state)
	global, err := c.assign(state)
	if err != nil {
		return err
	}
	mine := global.Of(c.id)
	c.log.Infof("computed assignment: %s", mine)

	if err := c.claim(mine); err != nil {
		return err
	}
	if l := c.cfg.RebalanceListener; l != nil {
		l.BeforeStartingFetchers(c.id, global)
	}
	tps := make([]kafka.TopicPartition, 0, len(mine))
	for tp := range mine {
		tps = append(tps, tp)
	}
	kafka.SortPartitions(tps)
	committed, err := c.fetchCommitted(ctx, tps)
	if err != nil {
		c.releaseClaims(tps)
		return err
	}

	c.commitMu.Lock()
	c.mu.Lock()
	gen := c.mu.gen
	owned := make(map[kafka.TopicPartition]*partState, len(mine))
	for _, tp := range tps {
		off := committed[tp]
		owned[tp] = &partState{tp: tp, owner: mine[tp], gen: gen, processed: off, committed: off}
	}
	c.mu.owned = owned
	streams := c.mu.streams
	wildcard := c.mu.sub.wildcard()
	c.mu.Unlock()
	c.commitMu.Unlock()

	for _, tp := range tps {
		key := streamKey{topic: tp.Topic, thread: mine[tp].Thread}
		if wildcard {
			key.topic = ""
		}
		s := streams[key]
		if s == nil {
			return fmt.Errorf("zkconsumer: assignment gives %s to thread %s, which has no stream", topicAndPartition(tp), mine[tp])
		}
		c.startFetcher(owned[tp], s)
	}
	c.log.Infof("rebalance done; fetching %d partitions", len(owned))
	return nil
}

// releaseAll ends the current generation: pause the streams and wait
// (rebalance.processing.wait.ms) for the messages they handed out to be
// processed, stop the fetchers, drop queued read-ahead, tell the rebalance
// listener (when notify is set and something is owned), commit what was
// processed (when auto.commit.enable is on, as Kafka does) and delete this
// consumer's owner znodes.
func (c *Connector) releaseAll(ctx context.Context, notify bool) {
	c.pauseStreams(ctx)
	c.stopFetchers()
	if l := c.cfg.RebalanceListener; notify && l != nil {
		// Outside commitMu: the listener may call CommitOffsets.
		c.mu.Lock()
		tps := make([]kafka.TopicPartition, 0, len(c.mu.owned))
		for tp := range c.mu.owned {
			tps = append(tps, tp)
		}
		c.mu.Unlock()
		if len(tps) > 0 {
			l.BeforeReleasingPartitions(ownedByTopic(tps))
		}
	}
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	if c.cfg.AutoCommitEnable {
		if err := c.commitLocked(ctx); err != nil {
			c.log.WithError(err).Warn("commit before releasing partitions failed")
		}
	}
	c.mu.Lock()
	owned := c.mu.owned
	c.mu.owned = make(map[kafka.TopicPartition]*partState)
	c.mu.Unlock()
	tps := make([]kafka.TopicPartition, 0, len(owned))
	for tp := range owned {
		tps = append(tps, tp)
	}
	c.releaseClaims(tps)
}

// releaseClaims deletes this session's owner znodes of tps.
func (c *Connector) releaseClaims(tps []kafka.TopicPartition) {
	for _, tp := range tps {
		if err := c.zk.ReleasePartition(c.cfg.GroupID, tp.Topic, tp.Partition); err != nil {
			c.log.WithError(err).WithField("topic", tp.Topic).WithField("partition", tp.Partition).Warn("release ownership failed")
		}
	}
}

// claim creates the owner znodes of mine in (topic, partition) order. On a
// conflict it deletes the claims of this attempt (Kafka's
// reflectPartitionOwnershipDecision).
func (c *Connector) claim(mine Assignment) error {
	tps := make([]kafka.TopicPartition, 0, len(mine))
	for tp := range mine {
		tps = append(tps, tp)
	}
	kafka.SortPartitions(tps)
	for i, tp := range tps {
		err := c.zk.ClaimPartition(c.cfg.GroupID, tp.Topic, tp.Partition, mine[tp].String())
		if err == nil {
			continue
		}
		c.releaseClaims(tps[:i])
		if errors.Is(err, zkutil.ErrNodeExists) {
			owner, _ := c.zk.GetPartitionOwner(c.cfg.GroupID, tp.Topic, tp.Partition)
			return fmt.Errorf("%w: %s held by %q", errClaimConflict, topicAndPartition(tp), owner)
		}
		return fmt.Errorf("zkconsumer: claim %s: %w", topicAndPartition(tp), err)
	}
	return nil
}

// readGroup reads every member's subscription and the partitions of every
// subscribed topic (Kafka's AssignmentContext).
func (c *Connector) readGroup() (GroupState, error) {
	group := c.cfg.GroupID
	ids, err := c.zk.GetConsumerIDs(group)
	if err != nil {
		return GroupState{}, fmt.Errorf("zkconsumer: read group members: %w", err)
	}
	var allTopics []string
	members := make(map[string]map[string]int, len(ids))
	for _, id := range ids {
		reg, err := c.zk.GetConsumerRegistration(group, id)
		if errors.Is(err, zkutil.ErrNoNode) {
			continue // left meanwhile; its departure triggers another rebalance
		}
		if errors.Is(err, zkutil.ErrMalformed) {
			// Every member skips it alike, so the others still agree.
			c.log.WithError(err).WithField("member", id).Warn("ignoring member with malformed registration")
			continue
		}
		if err != nil {
			return GroupState{}, fmt.Errorf("zkconsumer: read member %s: %w", id, err)
		}
		sub, err := subscriptionOf(reg)
		if err == nil && sub.wildcard() {
			_, err = sub.filter.compile(c.cfg.ExcludeInternalTopics)
		}
		if err != nil {
			c.log.WithError(err).WithField("member", id).Warn("ignoring member with unusable registration")
			continue
		}
		if sub.wildcard() && allTopics == nil {
			if allTopics, err = c.zk.GetAllTopics(); err != nil && !errors.Is(err, zkutil.ErrNoNode) {
				return GroupState{}, fmt.Errorf("zkconsumer: read topics: %w", err)
			}
			if allTopics == nil {
				allTopics = []string{}
			}
		}
		if members[id], err = sub.resolve(allTopics, c.cfg.ExcludeInternalTopics); err != nil {
			return GroupState{}, fmt.Errorf("zkconsumer: member %s: %w", id, err)
		}
	}
	if _, ok := members[c.id]; !ok {
		return GroupState{}, fmt.Errorf("zkconsumer: own registration %s missing from the group", c.id)
	}
	topicSet := map[string]bool{}
	for _, sub := range members {
		for t := range sub {
			topicSet[t] = true
		}
	}
	topics := sortedKeys(topicSet)
	assignments, err := c.zk.GetTopicAssignments(topics)
	if err != nil {
		return GroupState{}, fmt.Errorf("zkconsumer: read topic partitions: %w", err)
	}
	partitions := make(map[string][]int32, len(assignments))
	for t, a := range assignments {
		for p := range a.Assignment.Partitions {
			partitions[t] = append(partitions[t], p)
		}
		sort.Slice(partitions[t], func(i, j int) bool { return partitions[t][i] < partitions[t][j] })
	}
	return GroupState{Members: members, Partitions: partitions}, nil
}

// updateTopicWatches keeps one data watch on /brokers/topics/<t> per topic
// this consumer subscribes to (partition count or assignment changes).
func (c *Connector) updateTopicWatches(state GroupState) {
	want := state.Members[c.id]
	for t, cancel := range c.topicWatches {
		if _, ok := want[t]; !ok {
			cancel()
			delete(c.topicWatches, t)
		}
	}
	for t := range want {
		if _, ok := c.topicWatches[t]; !ok {
			c.topicWatches[t] = c.zk.WatchData(zkutil.TopicPath(t), c.trigger)
		}
	}
}
