package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// Topic deletion, as Kafka 2.8's TopicDeletionManager (reference §3.8):
//
//  1. /admin/delete_topics/<t> appears → the topic is queued (markers of unknown topics are
//     deleted; with delete.topic.enable=false every marker is deleted and nothing else).
//  2. For each queued topic that is eligible (no replica deletion in flight, no dead replica
//     waiting): partitions → Offline → NonExistent; UpdateMetadata to every broker with
//     leader -2; dead replicas → ReplicaDeletionIneligible (the topic waits for them); live
//     replicas → OfflineReplica (StopReplica delete=false) → ReplicaDeletionStarted
//     (StopReplica delete=true, leader epoch -2).
//  3. StopReplica answers: success → ReplicaDeletionSuccessful, error →
//     ReplicaDeletionIneligible. A topic whose replicas are all Successful is complete: its
//     replicas → NonExistent, /brokers/topics/<t> (with partition states), /config/topics/<t>
//     and the marker are deleted (fenced), and the topic leaves the context.
//  4. A topic with Ineligible replicas and none in flight is retried when it becomes eligible
//     again: when a broker hosting one of its replicas starts, or on the next deletion event.

// processTopicDeletion handles TopicDeletion (Kafka's processTopicDeletion).
func (c *Controller) processTopicDeletion() error {
	cc := c.cc
	marked, err := c.store.TopicsMarkedForDeletion()
	if err != nil {
		return fmt.Errorf("controller: read topics marked for deletion: %w", err)
	}
	var unknown, queue []string
	for _, t := range marked {
		if _, ok := cc.assignments[t]; ok {
			queue = append(queue, t)
		} else {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) > 0 {
		c.log.WithField("topics", unknown).Warn("controller: ignoring deletion of unknown topics; deleting their markers")
		if err := c.store.DeleteTopicDeletionMarks(cc.epochZkVersion, unknown); err != nil {
			return fmt.Errorf("controller: delete deletion markers: %w", err)
		}
	}
	if len(queue) == 0 {
		return nil
	}
	if c.cfg.DeleteTopicDisabled {
		c.log.WithField("topics", queue).Info("controller: delete.topic.enable is false; removing the deletion markers")
		if err := c.store.DeleteTopicDeletionMarks(cc.epochZkVersion, queue); err != nil {
			return fmt.Errorf("controller: delete deletion markers: %w", err)
		}
		return nil
	}
	var added []string
	for _, t := range queue {
		if !cc.isQueuedForDeletion(t) {
			cc.topicsToBeDeleted[t] = struct{}{}
			added = append(added, t)
		}
		if cc.topicBeingReassigned(t) {
			cc.topicsIneligibleForDeletion[t] = struct{}{} // resumed when the reassignment completes
		}
	}
	if len(added) > 0 {
		c.log.WithFields(logrus.Fields{"topics": added, "controller_epoch": cc.epoch}).Info("controller: topics queued for deletion")
	}
	return c.resumeDeletions()
}

// loadTopicDeletions queues the topics marked for deletion at failover; topics with a
// replica on a dead broker start ineligible (Kafka's fetchTopicDeletionsInProgress).
func (c *Controller) loadTopicDeletions() error {
	cc := c.cc
	marked, err := c.store.TopicsMarkedForDeletion()
	if err != nil {
		return fmt.Errorf("controller: read topics marked for deletion: %w", err)
	}
	if c.cfg.DeleteTopicDisabled {
		if len(marked) > 0 {
			c.log.WithField("topics", marked).Info("controller: delete.topic.enable is false; removing the deletion markers")
			return c.store.DeleteTopicDeletionMarks(cc.epochZkVersion, marked)
		}
		return nil
	}
	for _, t := range marked {
		cc.topicsToBeDeleted[t] = struct{}{}
		if cc.topicBeingReassigned(t) {
			cc.topicsIneligibleForDeletion[t] = struct{}{}
		}
		for _, r := range cc.replicasOfTopic(t) {
			if !cc.isReplicaLive(r.Replica, r.TopicPartition) {
				cc.topicsIneligibleForDeletion[t] = struct{}{}
			}
		}
	}
	return nil
}

// resumeDeletions is Kafka's TopicDeletionManager.resumeDeletions: complete topics whose
// replicas are all deleted, retry topics with failed replicas, start eligible topics.
func (c *Controller) resumeDeletions() error {
	cc := c.cc
	var retry, eligible []string
	for _, t := range slices.Sorted(maps.Keys(cc.topicsToBeDeleted)) {
		replicas := cc.replicasOfTopic(t)
		if len(cc.replicasInState(t, ReplicaDeletionSuccessful)) == len(replicas) {
			if err := c.completeDeleteTopic(t); err != nil {
				return err
			}
			continue
		}
		if len(cc.replicasInState(t, ReplicaDeletionStarted)) == 0 && len(cc.replicasInState(t, ReplicaDeletionIneligible)) > 0 {
			retry = append(retry, t)
		}
		if c.eligibleForDeletion(t) {
			eligible = append(eligible, t)
		}
	}
	if len(retry) > 0 {
		// Failed replicas go back to Offline, from where the next round starts them again.
		var failed []PartitionReplica
		for _, t := range retry {
			delete(cc.topicsIneligibleForDeletion, t)
			failed = append(failed, cc.replicasInState(t, ReplicaDeletionIneligible)...)
		}
		if err := c.handleReplicaStateChanges(failed, OfflineReplica); err != nil {
			return err
		}
	}
	if len(eligible) > 0 {
		return c.onTopicDeletion(eligible)
	}
	return nil
}

// eligibleForDeletion: queued, no replica deletion in flight, not waiting for a dead replica.
func (c *Controller) eligibleForDeletion(topic string) bool {
	cc := c.cc
	_, ineligible := cc.topicsIneligibleForDeletion[topic]
	return cc.isQueuedForDeletion(topic) && !ineligible && len(cc.replicasInState(topic, ReplicaDeletionStarted)) == 0
}

// onTopicDeletion starts (or restarts) the deletion of topics.
func (c *Controller) onTopicDeletion(topics []string) error {
	cc := c.cc
	var unseen, all []kafka.TopicPartition
	for _, t := range topics {
		parts := cc.partitionsOf(t)
		all = append(all, parts...)
		if _, started := cc.topicsWithDeletionStarted[t]; !started {
			unseen = append(unseen, parts...)
			cc.topicsWithDeletionStarted[t] = struct{}{}
		}
	}
	if _, err := c.handlePartitionStateChanges(unseen, OfflinePartition, electOffline); err != nil {
		return err
	}
	if _, err := c.handlePartitionStateChanges(unseen, NonExistentPartition, electOffline); err != nil {
		return err
	}
	// Leader -2 tells every broker to drop the partitions from its metadata.
	c.batch.addUpdateMetadata(cc.liveBrokerIDs(), all)
	for _, t := range topics {
		var live, dead []PartitionReplica
		for _, r := range cc.replicasOfTopic(t) {
			switch {
			case cc.replicaStates[r] == ReplicaDeletionSuccessful:
			case cc.isReplicaLive(r.Replica, r.TopicPartition):
				live = append(live, r)
			default:
				dead = append(dead, r)
			}
		}
		if err := c.handleReplicaStateChanges(dead, ReplicaDeletionIneligible); err != nil {
			return err
		}
		if err := c.handleReplicaStateChanges(live, OfflineReplica); err != nil {
			return err
		}
		if err := c.handleReplicaStateChanges(live, ReplicaDeletionStarted); err != nil {
			return err
		}
		if len(dead) > 0 {
			cc.topicsIneligibleForDeletion[t] = struct{}{}
			c.log.WithFields(logrus.Fields{"topic": t, "controller_epoch": cc.epoch}).
				Info("controller: topic deletion waits for offline replicas")
		}
	}
	return nil
}

// processReplicaDeletionResponse handles a StopReplica (delete=true) answer from broker.
func (c *Controller) processReplicaDeletionResponse(broker int32, results map[kafka.TopicPartition]error) error {
	cc := c.cc
	var failed, deleted []PartitionReplica
	for _, tp := range slices.SortedFunc(maps.Keys(results), kafka.ComparePartitions) {
		r := PartitionReplica{tp, broker}
		if !cc.isQueuedForDeletion(tp.Topic) || cc.replicaStates[r] != ReplicaDeletionStarted {
			continue
		}
		if err := results[tp]; err != nil {
			c.stateLog(tp).WithError(err).WithField("replica", broker).Warn("controller: replica deletion failed")
			failed = append(failed, r)
		} else {
			deleted = append(deleted, r)
		}
	}
	if err := c.failReplicaDeletion(failed); err != nil {
		return err
	}
	if err := c.handleReplicaStateChanges(deleted, ReplicaDeletionSuccessful); err != nil {
		return err
	}
	return c.resumeDeletions()
}

// failReplicaDeletion moves replicas of topics being deleted to ReplicaDeletionIneligible
// and marks their topics ineligible until retried.
func (c *Controller) failReplicaDeletion(replicas []PartitionReplica) error {
	cc := c.cc
	var valid []PartitionReplica
	for _, r := range replicas {
		if cc.isQueuedForDeletion(r.Topic) && cc.replicaStates[r] != ReplicaDeletionSuccessful {
			valid = append(valid, r)
			cc.topicsIneligibleForDeletion[r.Topic] = struct{}{}
		}
	}
	return c.handleReplicaStateChanges(valid, ReplicaDeletionIneligible)
}

// resumeDeletionForTopics makes topics eligible again (a broker hosting their replicas
// started) and resumes deletions.
func (c *Controller) resumeDeletionForTopics(topics []string) error {
	for _, t := range topics {
		delete(c.cc.topicsIneligibleForDeletion, t)
	}
	return c.resumeDeletions()
}

// completeDeleteTopic ends a topic's deletion: replicas → NonExistent, znodes deleted
// (fenced), topic removed from the context.
func (c *Controller) completeDeleteTopic(topic string) error {
	cc := c.cc
	if cancel := c.topicWatches[topic]; cancel != nil {
		cancel()
	}
	delete(c.topicWatches, topic)
	if err := c.handleReplicaStateChanges(cc.replicasInState(topic, ReplicaDeletionSuccessful), NonExistentReplica); err != nil {
		return err
	}
	if err := c.store.DeleteTopic(cc.epochZkVersion, topic); err != nil {
		return fmt.Errorf("controller: delete topic %s: %w", topic, err)
	}
	cc.removeTopic(topic)
	c.log.WithFields(logrus.Fields{"topic": topic, "controller_epoch": cc.epoch}).Info("controller: deletion of topic successfully completed")
	return nil
}
