package broker

import (
	"context"
	"strconv"
	"strings"

	"samsa/zkutil"
)

// configChangeLoop applies dynamic config changes announced under
// /config/changes (Kafka's DynamicConfigManager with its
// ZkNodeChangeNotificationListener): on every change of the children it
// handles the notifications above the last one seen, re-reading the full
// config of each named topic and applying it to the hosted partitions, and
// for brokers/<default> or brokers/<this id> reloading the dynamic broker
// configs (dynamic_config_apply.go). users/ and clients/ notifications are
// ignored: Samsa enforces no quotas.
func (b *Broker) configChangeLoop(ctx context.Context) {
	wake := make(chan struct{}, 1)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	cancel := b.zk.WatchChildren(zkutil.ConfigChangesPath(), signal)
	defer cancel()
	signal()
	last := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		nodes, err := b.zk.GetConfigChanges()
		if err != nil {
			b.log.WithError(err).Warn("reading config change notifications failed")
			continue
		}
		for _, n := range nodes {
			seq, err := strconv.ParseInt(strings.TrimPrefix(n, zkutil.ConfigChangeSeqPrefix), 10, 64)
			if err != nil || seq <= last {
				continue
			}
			last = seq
			entity, _, err := b.zk.ReadConfigChange(n)
			if err != nil {
				continue // deleted meanwhile (expired notification)
			}
			if name, ok := strings.CutPrefix(entity, zkutil.ConfigTypeBroker+"/"); ok {
				if name == defaultBrokerEntity || name == strconv.Itoa(int(b.ID())) {
					b.applyDynamicBrokerConfig()
				}
				continue
			}
			topic, ok := strings.CutPrefix(entity, zkutil.ConfigTypeTopic+"/")
			if !ok {
				continue
			}
			tc, err := b.topics.replicaTopicConfig(topic)
			if err == nil {
				err = b.replicas.UpdateTopicConfig(topic, tc)
			}
			if err != nil {
				b.log.WithError(err).WithField("topic", topic).Warn("applying a topic config change failed")
				continue
			}
			b.log.WithField("topic", topic).Info("applied topic config change")
		}
	}
}
