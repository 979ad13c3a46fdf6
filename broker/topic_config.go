package broker

import (
	"errors"
	"fmt"
	"slices"

	"samsa/broker/replica"
	"samsa/broker/storage"
	"samsa/config"
	"samsa/zkutil"
)

// topicConfigs resolves a topic's effective configuration: the broker's
// defaults (with dynamic broker overrides) with the topic's
// /config/topics/<t> overrides (Kafka LogConfig).
// It reads ZooKeeper on each call; it is used when a partition's log is
// opened (LeaderAndIsr) and by the admin APIs, never per produce or fetch.
type topicConfigs struct {
	b *Broker
}

func newTopicConfigs(b *Broker) *topicConfigs { return &topicConfigs{b: b} }

// get returns topic's effective config.
func (tc *topicConfigs) get(topic string) (*config.Topic, error) {
	overrides, err := tc.b.zk.GetEntityConfig(zkutil.ConfigTypeTopic, topic)
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return nil, fmt.Errorf("broker: read config of topic %q: %w", topic, err)
	}
	t, err := config.TopicFromOverrides(tc.b.topicDefaults(), overrides)
	if err != nil {
		// A bad override in ZooKeeper must not keep the partition offline:
		// Kafka logs it and uses the defaults.
		tc.b.log.WithError(err).WithField("topic", topic).Warn("invalid topic config in zookeeper; using broker defaults")
		return config.TopicFromOverrides(tc.b.topicDefaults(), nil)
	}
	return t, nil
}

// replicaTopicConfig implements replica.Config.TopicConfig.
func (tc *topicConfigs) replicaTopicConfig(topic string) (replica.TopicConfig, error) {
	t, err := tc.get(topic)
	if err != nil {
		return replica.TopicConfig{}, err
	}
	return replica.TopicConfig{Log: tc.b.logConfig(t), MinInsyncReplicas: int(t.MinInsyncReplicas)}, nil
}

// logConfig is storageConfig plus the broker-wide settings storage
// applies per log (transactional.id.expiration.ms for producer state).
func (b *Broker) logConfig(t *config.Topic) storage.Config {
	c := storageConfig(t)
	c.ProducerIDExpirationMs = int64(b.cfg.TransactionalIDExpirationMs)
	return c
}

// storageConfig translates a topic's config into the log's settings.
func storageConfig(t *config.Topic) storage.Config {
	c := storage.DefaultConfig()
	c.SegmentBytes = t.SegmentBytes
	c.SegmentMs = t.SegmentMs
	c.SegmentJitterMs = t.SegmentJitterMs
	c.IndexIntervalBytes = t.IndexIntervalBytes
	c.SegmentIndexBytes = t.SegmentIndexBytes
	c.RetentionMs = t.RetentionMs
	c.RetentionBytes = t.RetentionBytes
	c.MaxMessageBytes = t.MaxMessageBytes
	c.FlushMessages = t.FlushMessages
	c.FlushMs = t.FlushMs
	compact := slices.Contains(t.CleanupPolicy, "compact")
	del := slices.Contains(t.CleanupPolicy, "delete")
	switch {
	case compact && del:
		c.CleanupPolicy = storage.CleanupDeleteCompact
	case compact:
		c.CleanupPolicy = storage.CleanupCompact
	default:
		c.CleanupPolicy = storage.CleanupDelete
	}
	c.DeleteRetentionMs = t.DeleteRetentionMs
	c.MinCleanableRatio = t.MinCleanableDirtyRatio
	c.MinCompactionLagMs = t.MinCompactionLagMs
	c.MaxCompactionLagMs = t.MaxCompactionLagMs
	c.FileDeleteDelayMs = t.FileDeleteDelayMs
	if t.MessageTimestampType == "LogAppendTime" {
		c.MessageTimestampType = storage.LogAppendTime
	} else {
		c.MessageTimestampType = storage.CreateTime
	}
	c.MessageTimestampDifferenceMaxMs = t.MessageTimestampDifferenceMaxMs
	c.Preallocate = t.Preallocate
	return c
}
