package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// Log-dir failure handling (KIP-112, Kafka 2.8's KafkaController in ZooKeeper mode). A broker
// whose log dir fails keeps running, answers LeaderAndIsr with KAFKA_STORAGE_ERROR for the
// partitions of that dir and writes /log_dir_event_notification/log_dir_event_<seq>. The
// notification only makes the controller ask again: it sends LeaderAndIsr for every replica
// of the broker (onBrokerLogDirFailure). The answers decide: KAFKA_STORAGE_ERROR marks the
// replica offline (cc.replicasOnOfflineDirs) and moves leadership and ISR away from it
// (onReplicasBecomeOffline, shared with broker failure); NONE marks it online again.

// logDirFailureEvent is the only log-dir event type (Kafka's
// LogDirEventNotificationSequenceZNode.LogDirFailureEvent).
const logDirFailureEvent = 1

// processLogDirEventNotification handles LogDirEventNotification (Kafka's
// processLogDirEventNotification): read every notification, collect the brokers of
// log-dir-failure events, delete the notifications (fenced, also when handling failed) and
// send LeaderAndIsr for every replica of the brokers that are live.
func (c *Controller) processLogDirEventNotification() (err error) {
	cc := c.cc
	names, err := c.store.LogDirEventNotifications()
	if err != nil {
		return fmt.Errorf("controller: list log dir event notifications: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	defer func() {
		if derr := c.store.DeleteLogDirEventNotifications(cc.epochZkVersion, names); derr != nil && err == nil {
			err = fmt.Errorf("controller: delete log dir event notifications: %w", derr)
		}
	}()
	brokers := make(map[int32]struct{})
	for _, name := range names {
		id, ev, rerr := c.store.ReadLogDirEventNotification(name)
		switch {
		case rerr != nil:
			c.log.WithError(rerr).WithField("notification", name).Warn("controller: cannot read log dir event notification")
		case ev != logDirFailureEvent:
			c.log.WithFields(logrus.Fields{"notification": name, "event": ev, "log_dir_broker": id}).
				Warn("controller: ignoring log dir event notification of unknown type")
		case !cc.isLive(id):
			c.log.WithFields(logrus.Fields{"notification": name, "log_dir_broker": id}).
				Info("controller: ignoring log dir failure of a broker that is not live")
		default:
			brokers[id] = struct{}{}
		}
	}
	if len(brokers) == 0 {
		return nil
	}
	return c.onBrokerLogDirFailure(slices.Sorted(maps.Keys(brokers)))
}

// onBrokerLogDirFailure (Kafka's onBrokerLogDirFailure): move every replica on the brokers to
// OnlineReplica, which sends each broker LeaderAndIsr for all the partitions it hosts, "to
// see if they are still online"; the answers arrive as leaderAndIsrResponseEvents.
func (c *Controller) onBrokerLogDirFailure(ids []int32) error {
	c.log.WithFields(logrus.Fields{"log_dir_brokers": ids, "controller_epoch": c.cc.epoch}).
		Info("controller: handling log dir failure")
	return c.handleReplicaStateChanges(c.cc.replicasOnBrokers(ids), OnlineReplica)
}

// processLeaderAndIsrResponse handles LeaderAndIsrResponseReceived (Kafka's
// processLeaderAndIsrResponseReceived): the broker's offline replicas become previous −
// online + offline, and the newly offline ones go through onReplicasBecomeOffline.
func (c *Controller) processLeaderAndIsrResponse(e leaderAndIsrResponseEvent) error {
	cc := c.cc
	if e.controllerEpoch != cc.epoch {
		return nil // sent by an earlier tenure; the failover's LeaderAndIsr asks again
	}
	if b, ok := cc.liveBrokers[e.broker]; !ok || b.Epoch != e.brokerEpoch {
		return nil // the broker died or registered again (its dirs were reloaded)
	}
	prev := cc.replicasOnOfflineDirs[e.broker]
	if len(prev) == 0 && len(e.outcome.offline) == 0 {
		return nil
	}
	current := maps.Clone(prev)
	if current == nil {
		current = make(map[kafka.TopicPartition]struct{})
	}
	for _, tp := range e.outcome.online {
		delete(current, tp)
	}
	var newly []PartitionReplica
	for _, tp := range e.outcome.offline {
		if _, seen := current[tp]; seen {
			continue
		}
		current[tp] = struct{}{}
		if _, was := prev[tp]; !was && contains(cc.replicas(tp), e.broker) {
			newly = append(newly, PartitionReplica{tp, e.broker})
		}
	}
	if len(current) == 0 {
		delete(cc.replicasOnOfflineDirs, e.broker)
	} else {
		cc.replicasOnOfflineDirs[e.broker] = current
	}
	if len(newly) == 0 {
		return nil
	}
	slices.SortFunc(newly, func(a, b PartitionReplica) int { return kafka.ComparePartitions(a.TopicPartition, b.TopicPartition) })
	tps := make([]kafka.TopicPartition, len(newly))
	for i, r := range newly {
		tps[i] = r.TopicPartition
	}
	c.log.WithFields(logrus.Fields{"offline_broker": e.broker, "partitions": tps, "controller_epoch": cc.epoch}).
		Info("controller: replicas on a failed log dir are offline")
	return c.onReplicasBecomeOffline(newly)
}

// forgetOfflineReplica drops tp from broker id's replicas on failed log dirs (the partition
// was deleted).
func (cc *controllerContext) forgetOfflineReplica(id int32, tp kafka.TopicPartition) {
	set, ok := cc.replicasOnOfflineDirs[id]
	if !ok {
		return
	}
	delete(set, tp)
	if len(set) == 0 {
		delete(cc.replicasOnOfflineDirs, id)
	}
}
