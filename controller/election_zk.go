package controller

import (
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// processControllerChange handles Startup, ControllerChange and Reelect: re-read
// /controller, resign if another broker holds it, and run an election when nobody does.
func (c *Controller) processControllerChange() error {
	id, err := c.store.ControllerID()
	if err != nil {
		return fmt.Errorf("controller: read /controller: %w", err)
	}
	c.activeID.Store(id)
	if c.active.Load() && id != c.cfg.BrokerID {
		c.log.WithField("controller_id", id).Info("controller: another broker is now the controller; resigning")
		c.onControllerResignation()
	}
	if id == -1 {
		return c.elect()
	}
	return nil
}

// electionRetryBackoff is the pause before retrying an election that nobody won (ZooKeeper
// failed during it).
const electionRetryBackoff = time.Second

// processSessionRenewed handles a new ZooKeeper session after expiry. The old session's
// /controller is gone, so a controller elected under it resigns and a new election runs
// (Kafka resigns before the new session and elects after it). If this broker already won an
// election under the new session (a /controller change was processed first), /controller
// names it and /controller_epoch is still at its zkVersion: it stays active.
func (c *Controller) processSessionRenewed() error {
	if c.active.Load() {
		id, err := c.store.ControllerID()
		if err != nil {
			return fmt.Errorf("controller: read /controller: %w", err)
		}
		_, zkv, err := c.store.ControllerEpoch()
		if err != nil {
			return fmt.Errorf("controller: read /controller_epoch: %w", err)
		}
		if id == c.cfg.BrokerID && zkv == c.cc.epochZkVersion {
			return nil
		}
		c.log.Info("controller: new ZooKeeper session; resigning before re-election")
		c.onControllerResignation()
	}
	return c.elect()
}

// elect is Kafka's KafkaController.elect (2.1+): if nobody holds /controller, try to create
// it and bump /controller_epoch in one multi-op; the winner runs the failover.
func (c *Controller) elect() error {
	id, err := c.store.ControllerID()
	if err != nil {
		return fmt.Errorf("controller: read /controller: %w", err)
	}
	if id != -1 {
		c.activeID.Store(id)
		if id == c.cfg.BrokerID && !c.active.Load() {
			// Our own /controller (current session) without an active controller behind it,
			// e.g. left by a resignation: delete it, fenced by the current epoch, so that the
			// deletion watch starts a fresh election.
			c.log.Warn("controller: /controller names this broker but it is not active; deleting it")
			if _, zkv, err := c.store.ControllerEpoch(); err == nil {
				if err := c.store.DeleteController(zkv); err != nil {
					c.log.WithError(err).Warn("controller: cannot delete /controller")
				}
			}
		}
		return nil
	}
	epoch, epochZkVersion, err := c.store.ElectController(c.cfg.BrokerID)
	if err != nil {
		// Lost the race (or ZooKeeper failed): whoever holds /controller now is the controller.
		id, rerr := c.store.ControllerID()
		if rerr == nil {
			c.activeID.Store(id)
		}
		c.log.WithError(err).WithField("controller_id", id).Info("controller: not elected")
		if rerr != nil || id == -1 {
			// Nobody won, so no /controller change will come: try again shortly.
			c.cfg.AfterFunc(electionRetryBackoff, func() { c.enqueue(controllerChangeEvent{}) })
		}
		return nil
	}
	c.activeID.Store(c.cfg.BrokerID)
	c.epoch.Store(epoch)
	c.metrics.controllerMove.Inc(1)
	c.log.WithFields(logrus.Fields{"controller_epoch": epoch, "epoch_zk_version": epochZkVersion}).
		Info("controller: elected as the controller")
	if err := c.onControllerFailover(epoch, epochZkVersion); err != nil {
		if isControllerMoved(err) {
			return err // finishEvent resigns
		}
		c.log.WithError(err).Error("controller: failover failed; resigning and deleting /controller")
		c.triggerControllerMove()
	}
	return nil
}

// onControllerFailover makes this broker the active controller (Kafka 2.8's sequence):
// register watches, drop stale ISR notifications, load the brokers, assignments and pending
// topic deletions from ZooKeeper, send UpdateMetadata with the live brokers to every broker,
// read the partition states and start the replica and partition state machines (the
// partitions of dead leaders first: failover_order.go), then resume reassignments and topic
// deletions.
func (c *Controller) onControllerFailover(epoch, epochZkVersion int32) error {
	if c.active.Load() {
		c.onControllerResignation() // state of an election under an older session
		c.activeID.Store(c.cfg.BrokerID)
	}
	cc := newControllerContext(epoch, epochZkVersion)
	c.cc = cc
	c.tenure++
	c.batch = newRequestBatch()
	c.topicWatches = make(map[string]func())
	c.brokerWatches = make(map[int32]func())
	c.reassignWatches = make(map[kafka.TopicPartition]func())
	c.active.Store(true)
	c.registerDutyWatches()
	// Pending log dir events are dropped: the LeaderAndIsr sent to every broker below asks
	// each of them about every replica (Kafka's onControllerFailover).
	if err := c.store.DeleteLogDirEventNotifications(epochZkVersion, nil); err != nil {
		return fmt.Errorf("controller: delete log dir event notifications: %w", err)
	}
	if err := c.store.DeleteIsrChangeNotifications(epochZkVersion, nil); err != nil {
		return fmt.Errorf("controller: delete ISR change notifications: %w", err)
	}
	if err := c.loadBrokersAndTopics(); err != nil {
		return err
	}
	// UpdateMetadata with the live brokers to all brokers before any LeaderAndIsr, so that
	// they can reach the leaders it names (Kafka 2.8 failover step 5: it carries no
	// partition; every partition follows with its LeaderAndIsr).
	c.batch.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	c.sendBatch()
	if err := c.startupStateMachines(); err != nil {
		return err
	}
	if err := c.initializePartitionReassignments(); err != nil {
		return err
	}
	if err := c.resumeDeletions(); err != nil {
		return err
	}
	c.sendBatch()
	// A pending znode-triggered preferred election, then the rebalance timer.
	c.enqueue(preferredReplicaElectionEvent{})
	c.scheduleAutoRebalance(min(autoRebalanceDelay, c.cfg.LeaderImbalanceCheckInterval))
	c.metrics.update(cc)
	return nil
}

// registerDutyWatches registers the active controller's watches, before anything is read
// (Kafka registers its handlers first, so that no change between a read and its watch is
// missed).
func (c *Controller) registerDutyWatches() {
	c.dutyWatches = append(c.dutyWatches,
		c.store.WatchBrokers(func() { c.enqueue(brokerChangeEvent{}) }),
		c.store.WatchTopics(func() { c.enqueue(topicChangeEvent{}) }),
		c.store.WatchIsrChangeNotifications(func() { c.enqueue(isrChangeNotificationEvent{}) }),
		c.store.WatchLogDirEventNotifications(func() { c.enqueue(logDirEventNotificationEvent{}) }),
		c.store.WatchTopicDeletions(func() { c.enqueue(topicDeletionEvent{}) }),
		c.store.WatchPreferredReplicaElection(func() { c.enqueue(preferredReplicaElectionEvent{}) }),
		c.store.WatchPartitionReassignment(func() { c.enqueue(partitionReassignmentEvent{}) }),
	)
}

// loadBrokersAndTopics reads the live brokers (and opens a channel to each), the topics'
// assignments (assigning missing topic ids) and the pending topic deletions into the
// context: everything but the partition states.
func (c *Controller) loadBrokersAndTopics() error {
	cc := c.cc
	brokers, err := c.store.Brokers()
	if err != nil {
		return fmt.Errorf("controller: read brokers: %w", err)
	}
	for id, b := range brokers {
		cc.liveBrokers[id] = b
		c.channels.AddBroker(b)
		c.watchBroker(id)
	}
	topics, err := c.store.Topics()
	if err != nil {
		return fmt.Errorf("controller: read topics: %w", err)
	}
	if err := c.loadTopicAssignments(topics); err != nil {
		return err
	}
	if err := c.assignMissingTopicIDs(cc.topicsSorted()); err != nil {
		return err
	}
	return c.loadTopicDeletions()
}

// loadTopicAssignments reads the assignments of topics into the context and registers a
// PartitionModifications watch on each.
func (c *Controller) loadTopicAssignments(topics []string) error {
	assignments, err := c.store.TopicAssignments(topics)
	if err != nil {
		return fmt.Errorf("controller: read topic assignments: %w", err)
	}
	for topic := range assignments {
		c.watchTopic(topic)
	}
	c.cc.addTopicAssignments(assignments)
	return nil
}

// watchTopic registers the PartitionModifications watch of topic once.
func (c *Controller) watchTopic(topic string) {
	if _, ok := c.topicWatches[topic]; ok {
		return
	}
	c.topicWatches[topic] = c.store.WatchTopic(topic, func() { c.enqueue(partitionModificationsEvent{topic: topic}) })
}

// onControllerResignation stops the controller duties: cancel the duty watches, stop the
// senders, forget the context (Kafka's onControllerResignation).
func (c *Controller) onControllerResignation() {
	for _, cancel := range c.dutyWatches {
		if cancel != nil {
			cancel()
		}
	}
	c.dutyWatches = nil
	for _, cancel := range c.topicWatches {
		if cancel != nil {
			cancel()
		}
	}
	c.topicWatches = nil
	for _, cancel := range c.brokerWatches {
		if cancel != nil {
			cancel()
		}
	}
	c.brokerWatches = nil
	for _, cancel := range c.reassignWatches {
		if cancel != nil {
			cancel()
		}
	}
	c.reassignWatches = nil
	if c.stopRebalance != nil {
		c.stopRebalance()
		c.stopRebalance = nil
	}
	c.channels.RemoveAll()
	c.batch = newRequestBatch()
	epoch := int32(0)
	if c.cc != nil {
		epoch = c.cc.epoch
	}
	c.cc = nil
	c.active.Store(false)
	c.metrics.update(nil)
	c.log.WithField("controller_epoch", epoch).Info("controller: resigned as the controller")
}

// onControllerMoved handles ErrControllerMoved: resign and record who holds /controller.
// The write that failed is never retried.
func (c *Controller) onControllerMoved() {
	if c.active.Load() {
		c.onControllerResignation()
	}
	id, err := c.store.ControllerID()
	if err != nil {
		c.log.WithError(err).Warn("controller: cannot read /controller after controller moved")
		return
	}
	c.activeID.Store(id)
	if id == -1 {
		c.enqueue(controllerChangeEvent{}) // nobody holds /controller: elect again
	}
}

// triggerControllerMove resigns and deletes /controller (fenced) so that another broker can
// take over after a failed failover (Kafka's triggerControllerMove).
func (c *Controller) triggerControllerMove() {
	var epochZkVersion int32 = -1
	if c.cc != nil {
		epochZkVersion = c.cc.epochZkVersion
	}
	c.onControllerResignation()
	c.activeID.Store(-1)
	if epochZkVersion >= 0 {
		if err := c.store.DeleteController(epochZkVersion); err != nil {
			c.log.WithError(err).Warn("controller: cannot delete /controller")
		}
	}
}
