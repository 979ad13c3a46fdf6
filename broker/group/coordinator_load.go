package group

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/record"
	"samsa/broker/replay"
	"samsa/kafka"
)

// BecomeLeader tells the coordinator this broker now leads offsets
// partition p at leader epoch epoch (Kafka's onElection). It starts
// loading the partition in the background; until that finishes, requests
// for its groups get COORDINATOR_LOAD_IN_PROGRESS. A partition already
// owned keeps its state. It never blocks on I/O.
func (c *Coordinator) BecomeLeader(p int32, epoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed || p < 0 || p >= c.cfg.NumPartitions {
		return
	}
	if ps := c.mu.partitions[p]; ps != nil {
		ps.epoch = max(ps.epoch, epoch)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ps := &partitionState{epoch: epoch, loading: true, cancel: cancel, groups: map[string]*group{}}
	c.mu.partitions[p] = ps
	c.goTracked(func() { c.load(ctx, p, ps) })
}

// Resign tells the coordinator this broker no longer leads offsets
// partition p (Kafka's onResignation): its groups are unloaded and their
// pending calls answered with NOT_COORDINATOR. A resignation with an epoch
// older than the one BecomeLeader recorded is stale and ignored; pass -1
// to resign unconditionally. It does not wait for the groups to exit.
func (c *Coordinator) Resign(p int32, epoch int32) {
	c.mu.Lock()
	ps := c.mu.partitions[p]
	if ps == nil || (epoch >= 0 && epoch < ps.epoch) {
		c.mu.Unlock()
		return
	}
	stop := c.dropPartitionLocked(p, ps)
	c.mu.Unlock()
	for _, g := range stop {
		g.stop(kerr.NotCoordinator.Code)
	}
	c.log.WithFields(map[string]any{"partition": p, "groups": len(stop)}).Info("group: unloaded offsets partition")
}

// Owned reports whether this broker coordinates partition p and whether
// it is still loading it.
func (c *Coordinator) Owned(p int32) (owned, loading bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.mu.partitions[p]
	return ps != nil, ps != nil && ps.loading
}

// loaded is what replaying a partition yields for one group.
type loaded struct {
	value   *GroupValue
	offsets map[kafka.TopicPartition]OffsetValue
	txn     txnPending // transactional offsets without their marker yet
}

// load replays partition p and installs its groups, unless the partition
// was resigned meanwhile.
func (c *Coordinator) load(ctx context.Context, p int32, ps *partitionState) {
	start := c.clock.Now()
	groups, err := c.replay(ctx, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed || c.mu.partitions[p] != ps {
		return
	}
	if err != nil {
		c.log.WithError(err).WithField("partition", p).Error("group: loading offsets partition failed; not coordinating it")
		c.dropPartitionLocked(p, ps)
		return
	}
	for id, l := range groups {
		g := newGroup(c, id, p)
		g.restore(l)
		ps.groups[id] = g
		c.goTracked(g.run)
	}
	ps.loading = false
	c.log.WithFields(map[string]any{"partition": p, "groups": len(groups), "took": c.clock.Now().Sub(start)}).
		Info("group: loaded offsets partition")
}

// replay reads partition p from its start to the log end offset seen by
// the first read (Kafka's doLoadGroupsAndOffsets; the loop is
// broker/replay's, shared with the transaction coordinator). Records that
// do not decode are logged and skipped.
func (c *Coordinator) replay(ctx context.Context, p int32) (map[string]*loaded, error) {
	c.txnSeqs.reset(p)
	groups := map[string]*loaded{}
	get := func(id string) *loaded {
		l := groups[id]
		if l == nil {
			l = &loaded{offsets: map[kafka.TopicPartition]OffsetValue{}}
			groups[id] = l
		}
		return l
	}
	read := func(off int64, maxBytes int) ([]byte, int64, error) {
		res, err := c.olog.ReadFrom(p, off, maxBytes)
		return res.Batches, res.End, err
	}
	apply := func(b record.Batch, from int64) error {
		if b.IsControl() {
			c.replayTxnMarker(p, b, groups)
			return nil
		}
		txnPID := int64(-1)
		if b.IsTransactional() && b.ProducerID() >= 0 {
			txnPID = b.ProducerID()
			c.txnSeqs.appended(p, txnPID, b.ProducerEpoch(), b.LastSequence())
		}
		recs, err := b.Records(c.cfg.LoadMaxDecompressedBytes)
		if err != nil {
			return fmt.Errorf("batch at %d: %w", b.BaseOffset(), err)
		}
		for i := range recs {
			if b.BaseOffset()+int64(recs[i].OffsetDelta) < from {
				continue // applied from the read before
			}
			if txnPID >= 0 {
				c.replayTxnRecord(p, txnPID, recs[i].Key, recs[i].Value, get)
				continue
			}
			c.replayRecord(p, recs[i].Key, recs[i].Value, get, groups)
		}
		return nil
	}
	if err := replay.Partition(ctx, read, c.cfg.LoadBufferSize, apply); err != nil {
		return nil, fmt.Errorf("group: offsets partition %d: %w", p, err)
	}
	for id, l := range groups {
		if l.value == nil && len(l.offsets) == 0 && len(l.txn) == 0 {
			delete(groups, id) // only tombstones left
		}
	}
	return groups, nil
}

// replayRecord applies one record to the groups being loaded.
func (c *Coordinator) replayRecord(p int32, key, value []byte, get func(string) *loaded, groups map[string]*loaded) {
	if key == nil {
		return
	}
	k, err := DecodeKey(key)
	if err != nil {
		c.log.WithError(err).WithField("partition", p).Warn("group: skipping record with undecodable key")
		return
	}
	if k.IsOffset {
		tp := kafka.TopicPartition{Topic: k.Topic, Partition: k.Partition}
		if value == nil {
			if l := groups[k.Group]; l != nil {
				delete(l.offsets, tp)
			}
			return
		}
		v, err := DecodeOffsetValue(value)
		if err != nil {
			c.log.WithError(err).WithField("partition", p).Warn("group: skipping undecodable offset commit")
			return
		}
		get(k.Group).offsets[tp] = v
		return
	}
	if value == nil {
		if l := groups[k.Group]; l != nil {
			l.value = nil
		}
		return
	}
	v, err := DecodeGroupValue(value)
	if err != nil {
		c.log.WithError(err).WithField("partition", p).Warn("group: skipping undecodable group metadata")
		return
	}
	get(k.Group).value = &v
}

// restore fills a new (not yet running) group from what was loaded
// (Kafka's GroupMetadata.loadGroup and onGroupLoaded): a group with
// members is Stable and every member must heartbeat within its session
// timeout.
func (g *group) restore(l *loaded) {
	for tp, v := range l.offsets {
		g.offsets[tp] = offsetEntry{v}
	}
	for pid, m := range l.txn {
		for tp, v := range m {
			g.addTxnPending(pid, tp, v)
		}
	}
	g.publishCounts()
	v := l.value
	if v == nil {
		return
	}
	g.generation, g.protocolType, g.protocol, g.leader = v.Generation, v.ProtocolType, v.Protocol, v.Leader
	if v.CurrentStateTimestamp >= 0 {
		g.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
	}
	for _, mv := range v.Members {
		m := &member{
			id:               mv.MemberID,
			instanceID:       mv.GroupInstanceID,
			clientID:         mv.ClientID,
			clientHost:       mv.ClientHost,
			sessionTimeout:   time.Duration(mv.SessionTimeoutMs) * time.Millisecond,
			rebalanceTimeout: time.Duration(mv.RebalanceTimeoutMs) * time.Millisecond,
			protocolType:     v.ProtocolType,
			protocols:        []Protocol{{Name: v.Protocol, Metadata: mv.Subscription}},
			assignment:       mv.Assignment,
		}
		g.members[m.id] = m
		g.order = append(g.order, m.id)
		if m.instanceID != "" {
			g.static[m.instanceID] = m.id
		}
	}
	if len(g.members) > 0 {
		g.state = Stable
		if _, ok := g.members[g.leader]; !ok {
			g.leader = g.order[0]
		}
		g.computeSubscriptions()
		for _, m := range g.members {
			g.scheduleHeartbeat(m, 0)
		}
		if int32(len(g.members)) > g.c.cfg.MaxSize {
			// Kafka's onGroupLoaded: group.max.size was lowered since.
			g.prepareRebalance(otherReason("Freshly-loaded group is over capacity (group.max.size). Rebalancing in order to give a chance for consumers to commit offsets"))
		}
	}
	g.publish()
}

// scheduleExpiryLocked arms the next offsets.retention.check.interval.ms
// tick.
func (c *Coordinator) scheduleExpiryLocked() {
	if c.cfg.OffsetsRetentionCheck <= 0 || c.mu.closed {
		return
	}
	c.mu.expiryTimer = c.clock.AfterFunc(c.cfg.OffsetsRetentionCheck, c.expireTick)
}

// loadedGroupsLocked returns the groups of every partition that has
// finished loading. c.mu must be held.
func (c *Coordinator) loadedGroupsLocked() []*group {
	var groups []*group
	for _, ps := range c.mu.partitions {
		if ps.loading {
			continue
		}
		for _, g := range ps.groups {
			groups = append(groups, g)
		}
	}
	return groups
}

// expireTick asks every loaded group to drop expired offsets (Kafka's
// cleanupGroupMetadata), then re-arms.
func (c *Coordinator) expireTick() {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return
	}
	groups := c.loadedGroupsLocked()
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()
	now := c.clock.Now()
	for _, g := range groups {
		g.post(func() { g.expireOffsets(now, c.cfg.OffsetsRetention) })
	}
	c.mu.Lock()
	c.scheduleExpiryLocked()
	c.mu.Unlock()
}

// HandleDeletedPartitions removes the committed offsets of partitions whose
// topic was deleted from every group this coordinator has loaded (Kafka's
// handleDeletedPartitions, called when UpdateMetadata drops them), so a
// topic re-created under the same name does not inherit stale offsets. An
// Empty group left without offsets is deleted. Tombstones are written for
// both; it does not wait for them.
func (c *Coordinator) HandleDeletedPartitions(tps []kafka.TopicPartition) {
	if len(tps) == 0 {
		return
	}
	deleted := make(map[kafka.TopicPartition]bool, len(tps))
	for _, tp := range tps {
		deleted[tp] = true
	}
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return
	}
	groups := c.loadedGroupsLocked()
	c.mu.Unlock()
	for _, g := range groups {
		g.post(func() { g.removeDeletedOffsets(deleted) })
	}
}
