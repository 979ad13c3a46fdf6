package controller

import (
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// The failover's two rounds: a new controller reads, elects and announces the partitions its
// broker's metadata cache names as led by a dead broker before it reads all the others.
//
// A new controller reads every partition state back from ZooKeeper before it trusts its
// context (Kafka 2.8's initializeControllerContext): at 10,000 partitions that is 10,000
// reads, about a second at the ~10,000 reads/s one ZooKeeper session gets here, and Kafka
// elects nothing until all are in. Yet what a partition's election decides on is its own
// state, its assignment, the live brokers and the topics being deleted, and all but the state
// are read before any state is. So the failover reads and handles the partitions in two
// rounds: first those that Config.LeaderHint (the broker's own metadata cache, as the last
// controller left it) names as led by a broker that is not live, then all the others. Each
// round reads its partitions' states from ZooKeeper, starts the replica and partition state
// machines on them and sends its LeaderAndIsr and UpdateMetadata at once, so the brokers
// apply the new leaders while the controller reads the rest.
//
// The hint only orders the work; no decision is taken on it. A partition the hint wrongly
// names as led by a dead broker is read, found led by a live one and left Online, as the
// single round would; one it wrongly names as led by a live broker is elected in the second
// round; every write stays conditional on the zkVersion read and fenced by the controller
// epoch, and a conflict re-reads the state (electLeaders). No event is handled between the
// rounds (they run within one event), so nothing but ZooKeeper itself changes meanwhile.

// startupStateMachines reads the partition states and starts the state machines in the two
// rounds described above, logging when the first round's requests left and when the context
// was complete.
func (c *Controller) startupStateMachines() error {
	cc := c.cc
	start := c.cfg.Now()
	first, rest := c.partitionsToLeadFirst(cc.allPartitions())
	if len(first) > 0 {
		if err := c.startupRound(first); err != nil {
			return err
		}
		c.sendBatch()
		c.log.WithFields(logrus.Fields{"controller_epoch": cc.epoch, "partitions": len(first),
			"took": c.cfg.Now().Sub(start).Round(time.Millisecond).String()}).
			Info("controller: handled the partitions led by dead brokers first")
	}
	if err := c.loadPartitionStates(rest); err != nil {
		return err
	}
	c.log.WithFields(logrus.Fields{"controller_epoch": cc.epoch, "brokers": cc.liveBrokerIDs(),
		"topics": len(cc.assignments), "partitions": cc.partitionCount()}).Info("controller: initialized controller context")
	return c.startupReplicaAndPartitionStateMachines(rest)
}

// startupRound reads the states of tps and starts the state machines on them.
func (c *Controller) startupRound(tps []kafka.TopicPartition) error {
	if err := c.loadPartitionStates(tps); err != nil {
		return err
	}
	return c.startupReplicaAndPartitionStateMachines(tps)
}

// startupReplicaAndPartitionStateMachines starts the replica state machine, then the
// partition state machine, on tps (Kafka's order).
func (c *Controller) startupReplicaAndPartitionStateMachines(tps []kafka.TopicPartition) error {
	if err := c.startupReplicaStateMachine(tps); err != nil {
		return err
	}
	return c.startupPartitionStateMachine(tps)
}

// partitionsToLeadFirst splits tps (sorted; the result keeps the order) into those that
// Config.LeaderHint names as led by a broker that is not live, or as leaderless, and the
// others. Partitions of topics queued for deletion are never elected and go with the others.
// Without a hint every partition is in rest.
func (c *Controller) partitionsToLeadFirst(tps []kafka.TopicPartition) (first, rest []kafka.TopicPartition) {
	hint := c.cfg.LeaderHint
	if hint == nil {
		return nil, tps
	}
	cc := c.cc
	for _, tp := range tps {
		if leader, ok := hint(tp); ok && !cc.isLive(leader) && !cc.isQueuedForDeletion(tp.Topic) {
			first = append(first, tp)
		} else {
			rest = append(rest, tp)
		}
	}
	return first, rest
}

// loadPartitionStates reads the states of tps from the store into the context.
func (c *Controller) loadPartitionStates(tps []kafka.TopicPartition) error {
	if len(tps) == 0 {
		return nil
	}
	states, err := c.store.PartitionStates(tps)
	if err != nil {
		return fmt.Errorf("controller: read partition states: %w", err)
	}
	for tp, s := range states {
		c.cc.leadership[tp] = s
	}
	return nil
}
