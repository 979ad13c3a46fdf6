package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// processBrokerChange handles BrokerChange (Kafka's processBrokerChange): compare the
// registrations under /brokers/ids with the live set. New brokers start; dead brokers fail;
// a bounced broker (same id, newer epoch: it re-registered after session expiry) fails then
// starts.
func (c *Controller) processBrokerChange() error {
	cc := c.cc
	current, err := c.store.Brokers()
	if err != nil {
		return fmt.Errorf("controller: read brokers: %w", err)
	}
	var newIDs, deadIDs, bouncedIDs []int32
	for id, b := range current {
		old, known := cc.liveBrokers[id]
		switch {
		case !known:
			newIDs = append(newIDs, id)
		case b.Epoch > old.Epoch:
			bouncedIDs = append(bouncedIDs, id)
		}
	}
	for id := range cc.liveBrokers {
		if _, ok := current[id]; !ok {
			deadIDs = append(deadIDs, id)
		}
	}
	slices.Sort(newIDs)
	slices.Sort(deadIDs)
	slices.Sort(bouncedIDs)
	if len(newIDs)+len(deadIDs)+len(bouncedIDs) == 0 {
		return nil
	}
	c.log.WithFields(logrus.Fields{"new_brokers": newIDs, "dead_brokers": deadIDs, "bounced_brokers": bouncedIDs,
		"controller_epoch": cc.epoch}).Info("controller: broker change")

	for _, id := range deadIDs {
		c.channels.RemoveBroker(id)
		c.unwatchBroker(id)
	}
	for _, id := range bouncedIDs {
		c.channels.RemoveBroker(id)
	}
	for _, id := range append(slices.Clone(newIDs), bouncedIDs...) {
		c.channels.AddBroker(current[id])
		c.watchBroker(id)
	}
	if len(newIDs) > 0 {
		for _, id := range newIDs {
			cc.liveBrokers[id] = current[id]
		}
		if err := c.onBrokerStartup(newIDs); err != nil {
			return err
		}
	}
	if len(bouncedIDs) > 0 {
		for _, id := range bouncedIDs {
			delete(cc.liveBrokers, id)
		}
		if err := c.onBrokerFailure(bouncedIDs); err != nil {
			return err
		}
		for _, id := range bouncedIDs {
			cc.liveBrokers[id] = current[id]
		}
		if err := c.onBrokerStartup(bouncedIDs); err != nil {
			return err
		}
	}
	if len(deadIDs) > 0 {
		for _, id := range deadIDs {
			delete(cc.liveBrokers, id)
		}
		if err := c.onBrokerFailure(deadIDs); err != nil {
			return err
		}
	}
	return nil
}

// onBrokerStartup (Kafka's onBrokerStartup): the new brokers' failed log dirs are forgotten
// (they loaded their dirs again), UpdateMetadata with no partitions to the other brokers
// (they learn the new members), a full UpdateMetadata to the new brokers, their replicas →
// Online (LeaderAndIsr with the current state), then elect leaders for partitions that are
// New or Offline, and resume deletions of topics with replicas on them.
func (c *Controller) onBrokerStartup(newIDs []int32) error {
	cc := c.cc
	for _, id := range newIDs {
		delete(cc.replicasOnOfflineDirs, id)
	}
	var existing []int32
	for _, id := range cc.liveBrokerIDs() {
		if !contains(newIDs, id) {
			existing = append(existing, id)
		}
	}
	// Separate batches so that the two UpdateMetadata contents do not merge.
	c.batch.addUpdateMetadata(existing, nil)
	c.sendBatch()
	c.batch.addUpdateMetadata(newIDs, cc.allPartitions())
	c.sendBatch()
	replicas := cc.replicasOnBrokers(newIDs)
	if err := c.handleReplicaStateChanges(replicas, OnlineReplica); err != nil {
		return err
	}
	if _, err := c.triggerOnlinePartitionStateChange(); err != nil {
		return err
	}
	if err := c.resumeReassignments(func(tp kafka.TopicPartition) bool {
		return slices.ContainsFunc(TargetReplicas(cc.replicas(tp), cc.removing[tp]), func(r int32) bool { return contains(newIDs, r) })
	}); err != nil {
		return err
	}
	deleting := map[string]struct{}{}
	for _, r := range replicas {
		if cc.isQueuedForDeletion(r.Topic) {
			deleting[r.Topic] = struct{}{}
		}
	}
	if len(deleting) > 0 {
		return c.resumeDeletionForTopics(slices.Sorted(maps.Keys(deleting)))
	}
	return nil
}

// onBrokerFailure (Kafka's onBrokerFailure): the dead brokers leave the shutting-down set and
// their failed log dirs are forgotten, then all their replicas become offline.
func (c *Controller) onBrokerFailure(deadIDs []int32) error {
	cc := c.cc
	for _, id := range deadIDs {
		delete(cc.shuttingDown, id)
		delete(cc.replicasOnOfflineDirs, id)
	}
	return c.onReplicasBecomeOffline(cc.replicasOnBrokers(deadIDs))
}

// onReplicasBecomeOffline (Kafka's onReplicasBecomeOffline), for replicas whose broker died
// or whose log dir failed (the caller has already made them count as offline): partitions
// whose leader is now offline → Offline, then every Offline or New partition tries to come
// Online (OfflinePartitionLeaderElection); the offline replicas → Offline (ISR shrink), or
// ReplicaDeletionIneligible for topics being deleted. If no leader changed, UpdateMetadata
// still goes to every broker so that it learns the dead brokers (the ISR shrinks carry the
// offline replicas' partitions).
func (c *Controller) onReplicasBecomeOffline(offlineReplicas []PartitionReplica) error {
	cc := c.cc
	withOfflineLeader := cc.partitionsWithOfflineLeader()
	if _, err := c.handlePartitionStateChanges(withOfflineLeader, OfflinePartition, electOffline); err != nil {
		return err
	}
	online, err := c.triggerOnlinePartitionStateChange()
	if err != nil {
		return err
	}
	var forDeletion, notForDeletion []PartitionReplica
	for _, r := range offlineReplicas {
		if cc.isQueuedForDeletion(r.Topic) {
			forDeletion = append(forDeletion, r)
		} else {
			notForDeletion = append(notForDeletion, r)
		}
	}
	if err := c.handleReplicaStateChanges(notForDeletion, OfflineReplica); err != nil {
		return err
	}
	if len(forDeletion) > 0 {
		if err := c.failReplicaDeletion(forDeletion); err != nil {
			return err
		}
	}
	if len(withOfflineLeader) == 0 && len(online) == 0 {
		c.batch.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	}
	return nil
}

// processBrokerModification handles BrokerModifications (Kafka's processBrokerModification):
// a registered broker rewrote its registration (same epoch) with other endpoints or rack;
// the sender reconnects to the new endpoint and every broker gets UpdateMetadata.
func (c *Controller) processBrokerModification(id int32) error {
	cc := c.cc
	old, known := cc.liveBrokers[id]
	if !known {
		return nil
	}
	current, err := c.store.Brokers()
	if err != nil {
		return fmt.Errorf("controller: read brokers: %w", err)
	}
	b, ok := current[id]
	if !ok || b.Epoch != old.Epoch || (b.Rack == old.Rack && slices.Equal(b.Endpoints, old.Endpoints)) {
		return nil // gone or bounced (BrokerChange handles it), or unchanged
	}
	c.log.WithFields(logrus.Fields{"broker": id, "controller_epoch": cc.epoch}).Info("controller: broker registration changed")
	cc.liveBrokers[id] = b
	c.channels.RemoveBroker(id)
	c.channels.AddBroker(b)
	c.batch.addUpdateMetadata(cc.liveBrokerIDs(), nil)
	return nil
}

// watchBroker registers the BrokerModifications watch of broker id once.
func (c *Controller) watchBroker(id int32) {
	if _, ok := c.brokerWatches[id]; ok {
		return
	}
	c.brokerWatches[id] = c.store.WatchBroker(id, func() { c.enqueue(brokerModificationsEvent{id: id}) })
}

// unwatchBroker cancels the BrokerModifications watch of broker id.
func (c *Controller) unwatchBroker(id int32) {
	if cancel := c.brokerWatches[id]; cancel != nil {
		cancel()
	}
	delete(c.brokerWatches, id)
}
