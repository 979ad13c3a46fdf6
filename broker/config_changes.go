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
// configs (dynamic_config_apply.go), and for users/ and clients/ entities
// re-reading that entity's client quotas (quota_wiring.go). Client quotas
// are loaded in full when the loop starts (retried on each wake until a
// load succeeds).
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
	quotasLoaded := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		if !quotasLoaded {
			if err := b.loadClientQuotas(); err != nil {
				b.log.WithError(err).Warn("loading client quotas failed")
			} else {
				quotasLoaded = true
			}
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
			if strings.HasPrefix(entity, zkutil.ConfigTypeUser+"/") {
				b.applySCRAMChange(entity)
			}
			if strings.HasPrefix(entity, zkutil.ConfigTypeUser+"/") || strings.HasPrefix(entity, zkutil.ConfigTypeClient+"/") {
				if quotasLoaded {
					if err := b.applyQuotaChange(entity); err != nil {
						b.log.WithError(err).WithField("entity", entity).Warn("applying a client quota change failed")
						quotasLoaded = false // reload everything on the next wake
					}
				}
				continue
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
