package broker

import (
	"errors"
	"strconv"
	"strings"

	"samsa/broker/configchange"
	"samsa/broker/replica"
	"samsa/zkutil"
)

// Replication throttles (Kafka's ReplicationQuotaManager fed by the dynamic
// config handlers): leader.replication.throttled.rate and
// follower.replication.throttled.rate from /config/brokers/<id> (else
// /config/brokers/<default>), and each topic's
// leader/follower.replication.throttled.replicas entries naming this broker
// ("partition:broker", or "*" for all), as kafka-reassign-partitions and
// kafka-configs write them. They are loaded when the /config/changes
// listener starts and updated on every notification of a broker or topic
// entity (throttleConfigHandler); the replica manager's Throttles apply them (fetch answers to out-of-sync
// followers, and this broker's own follower fetches).

const (
	leaderThrottledRateKey       = "leader.replication.throttled.rate"
	followerThrottledRateKey     = "follower.replication.throttled.rate"
	leaderThrottledReplicasKey   = "leader.replication.throttled.replicas"
	followerThrottledReplicasKey = "follower.replication.throttled.replicas"
)

// throttleConfigHandler is the replication throttles' /config/changes
// handler (config_changes.go): a full load first, then the rates on every
// broker entity change and a topic's throttled replicas on its change.
func (b *Broker) throttleConfigHandler() configchange.Handler {
	return configchange.Handler{Name: "replication throttles", Load: b.loadAllThrottles,
		Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeBroker: func(configchange.Change) error { return b.loadThrottleRates() },
			zkutil.ConfigTypeTopic: func(c configchange.Change) error {
				cfg, err := b.zk.GetEntityConfig(zkutil.ConfigTypeTopic, c.Name)
				if errors.Is(err, zkutil.ErrNoNode) {
					cfg, err = nil, nil
				}
				if err != nil {
					return err
				}
				b.applyTopicThrottles(c.Name, cfg)
				return nil
			},
		}}
}

func (b *Broker) loadAllThrottles() error {
	if err := b.loadThrottleRates(); err != nil {
		return err
	}
	all, err := b.zk.GetAllEntityConfigs(zkutil.ConfigTypeTopic)
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return err
	}
	for topic, cfg := range all {
		b.applyTopicThrottles(topic, cfg)
	}
	return nil
}

// loadThrottleRates reads the two rates (per-broker entity over <default>).
func (b *Broker) loadThrottleRates() error {
	rates := map[string]int64{leaderThrottledRateKey: -1, followerThrottledRateKey: -1}
	for _, entity := range []string{defaultBrokerEntity, strconv.Itoa(int(b.ID()))} {
		cfg, err := b.zk.GetEntityConfig(zkutil.ConfigTypeBroker, entity)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		for k := range rates {
			if v, ok := cfg[k]; ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					b.log.WithField("key", k).WithField("value", v).Warn("ignoring invalid replication throttle rate")
					continue
				}
				rates[k] = n
			}
		}
	}
	b.replicas.LeaderThrottle.SetRate(rates[leaderThrottledRateKey])
	b.replicas.FollowerThrottle.SetRate(rates[followerThrottledRateKey])
	return nil
}

// applyTopicThrottles sets topic's throttled partitions for this broker.
func (b *Broker) applyTopicThrottles(topic string, cfg map[string]string) {
	for key, t := range map[string]*replica.Throttle{
		leaderThrottledReplicasKey:   b.replicas.LeaderThrottle,
		followerThrottledReplicasKey: b.replicas.FollowerThrottle,
	} {
		parts, all := throttledPartitions(cfg[key], b.ID())
		t.SetPartitions(topic, parts, all)
	}
}

// throttledPartitions parses a throttled-replicas list ("*" or
// "p:b,p:b") and returns the partitions whose replica is broker id.
func throttledPartitions(list string, id int32) ([]int32, bool) {
	list = strings.TrimSpace(list)
	if list == "*" {
		return nil, true
	}
	var out []int32
	for _, e := range strings.Split(list, ",") {
		p, br, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok {
			continue
		}
		pn, err1 := strconv.ParseInt(p, 10, 32)
		bn, err2 := strconv.ParseInt(br, 10, 32)
		if err1 == nil && err2 == nil && int32(bn) == id {
			out = append(out, int32(pn))
		}
	}
	return out, false
}
