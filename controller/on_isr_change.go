package controller

import (
	"fmt"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// processIsrChangeNotification handles IsrChangeNotification (Kafka's
// processIsrChangeNotification): leaders that changed an ISR themselves wrote
// /isr_change_notification/isr_change_<seq>; re-read those partitions' states into the
// cache, send UpdateMetadata for them to every broker, then delete the processed
// notifications (fenced), also when reading them failed.
func (c *Controller) processIsrChangeNotification() (err error) {
	cc := c.cc
	names, err := c.store.IsrChangeNotifications()
	if err != nil {
		return fmt.Errorf("controller: list ISR change notifications: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	defer func() {
		if derr := c.store.DeleteIsrChangeNotifications(cc.epochZkVersion, names); derr != nil && err == nil {
			err = fmt.Errorf("controller: delete ISR change notifications: %w", derr)
		}
	}()
	seen := make(map[kafka.TopicPartition]struct{})
	var tps []kafka.TopicPartition
	for _, name := range names {
		parts, rerr := c.store.ReadIsrChangeNotification(name)
		if rerr != nil {
			c.log.WithError(rerr).WithField("notification", name).Warn("controller: cannot read ISR change notification")
			continue
		}
		for _, tp := range parts {
			if _, dup := seen[tp]; dup || cc.replicas(tp) == nil {
				continue
			}
			seen[tp] = struct{}{}
			tps = append(tps, tp)
		}
	}
	if len(tps) == 0 {
		return nil
	}
	kafka.SortPartitions(tps)
	states, err := c.store.PartitionStates(tps)
	if err != nil {
		return fmt.Errorf("controller: read partition states: %w", err)
	}
	var updated []kafka.TopicPartition
	for _, tp := range tps {
		st, ok := states[tp]
		if !ok {
			continue
		}
		cc.leadership[tp] = st
		updated = append(updated, tp)
		c.stateLog(tp).WithFields(logrus.Fields{"leader": st.Leader, "leader_epoch": st.LeaderEpoch, "isr": st.Isr}).
			Info("controller: ISR changed")
	}
	c.batch.addUpdateMetadata(cc.liveBrokerIDs(), updated)
	for _, tp := range updated {
		if err := c.maybeCompleteReassignment(tp); err != nil {
			return err
		}
	}
	return nil
}
