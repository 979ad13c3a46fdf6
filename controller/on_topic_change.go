package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// processTopicChange handles TopicChange (Kafka's processTopicChange): new topics under
// /brokers/topics get a PartitionModifications watch and their partitions are created;
// topics that disappeared are forgotten.
func (c *Controller) processTopicChange() error {
	cc := c.cc
	topics, err := c.store.Topics()
	if err != nil {
		return fmt.Errorf("controller: read topics: %w", err)
	}
	var newTopics []string
	for _, t := range topics {
		if _, known := cc.assignments[t]; !known {
			newTopics = append(newTopics, t)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(cc.assignments)) {
		if !slices.Contains(topics, t) {
			c.log.WithFields(logrus.Fields{"topic": t, "controller_epoch": cc.epoch}).Info("controller: topic removed")
			if cancel := c.topicWatches[t]; cancel != nil {
				cancel()
			}
			delete(c.topicWatches, t)
			cc.removeTopic(t)
		}
	}
	if len(newTopics) == 0 {
		return nil
	}
	slices.Sort(newTopics)
	for _, t := range newTopics {
		c.watchTopic(t)
	}
	assignments, err := c.store.TopicAssignments(newTopics)
	if err != nil {
		return fmt.Errorf("controller: read topic assignments: %w", err)
	}
	added := cc.addTopicAssignments(assignments)
	c.log.WithFields(logrus.Fields{"topics": newTopics, "partitions": len(added), "controller_epoch": cc.epoch}).
		Info("controller: new topics")
	if err := c.assignMissingTopicIDs(newTopics); err != nil {
		return err
	}
	return c.onNewPartitionCreation(added)
}

// processPartitionModifications handles PartitionModifications (partitions added to an
// existing topic by rewriting /brokers/topics/<t>).
func (c *Controller) processPartitionModifications(topic string) error {
	cc := c.cc
	if _, known := cc.assignments[topic]; !known {
		return nil // the TopicChange event handles it
	}
	assignments, err := c.store.TopicAssignments([]string{topic})
	if err != nil {
		return fmt.Errorf("controller: read topic assignment: %w", err)
	}
	a, ok := assignments[topic]
	if !ok {
		return nil
	}
	var added []kafka.TopicPartition
	for p := range a.Partitions {
		if cc.replicas(kafka.TopicPartition{Topic: topic, Partition: p}) == nil {
			added = append(added, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	if len(added) == 0 {
		return nil
	}
	if cc.isQueuedForDeletion(topic) {
		// Kafka's restorePartitionReplicaAssignment: no new partitions for a topic being deleted.
		c.log.WithFields(logrus.Fields{"topic": topic, "controller_epoch": cc.epoch}).
			Info("controller: restoring the assignment of a topic being deleted; partitions may not be added")
		if err := c.store.SetTopicAssignment(cc.epochZkVersion, topic, cc.topicAssignment(topic)); err != nil {
			return fmt.Errorf("controller: restore topic assignment: %w", err)
		}
		return nil
	}
	for _, tp := range added {
		cc.setAssignment(tp, a.Partitions[tp.Partition])
	}
	kafka.SortPartitions(added)
	c.log.WithFields(logrus.Fields{"topic": topic, "partitions": len(added), "controller_epoch": cc.epoch}).
		Info("controller: new partitions for existing topic")
	return c.onNewPartitionCreation(added)
}

// onNewPartitionCreation (Kafka's onNewPartitionCreation): partitions → New, replicas →
// NewReplica, partitions → Online (create the state znodes; LeaderAndIsr IsNew to the live
// replicas and UpdateMetadata to all), replicas → Online.
func (c *Controller) onNewPartitionCreation(tps []kafka.TopicPartition) error {
	cc := c.cc
	var replicas []PartitionReplica
	for _, tp := range tps {
		for _, r := range cc.replicas(tp) {
			replicas = append(replicas, PartitionReplica{tp, r})
		}
	}
	if _, err := c.handlePartitionStateChanges(tps, NewPartition, electOffline); err != nil {
		return err
	}
	if err := c.handleReplicaStateChanges(replicas, NewReplica); err != nil {
		return err
	}
	if _, err := c.handlePartitionStateChanges(tps, OnlinePartition, electOffline); err != nil {
		return err
	}
	return c.handleReplicaStateChanges(replicas, OnlineReplica)
}
