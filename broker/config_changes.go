package broker

import (
	"context"
	"strconv"

	"samsa/broker/configchange"
	"samsa/zkutil"
)

// configChangeLoop runs the broker's one /config/changes listener
// (broker/configchange, Kafka's DynamicConfigManager) until ctx ends. Each
// notification goes, by entity type, to:
//   - users: the SCRAM credential cache (security_wiring.go);
//   - users, clients: the client quotas, loaded in full first
//     (quota_wiring.go; quotaConfigHandler);
//   - brokers/<default> or brokers/<this id>: the dynamic broker configs
//     (dynamic_config_apply.go);
//   - topics: the topic's config, re-read and applied to its hosted
//     partitions;
//   - brokers, topics: the replication throttles, loaded in full first
//     (replication_throttle.go);
//   - ips: the per-address connection_creation_rate quotas, loaded in full
//     each time (quota_ip.go).
func (b *Broker) configChangeLoop(ctx context.Context) {
	configchange.New(b.zk, b.log,
		configchange.Handler{Name: "scram credentials", Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeUser: func(c configchange.Change) error { b.applySCRAMChange(c.Path()); return nil },
		}},
		b.quotaConfigHandler(),
		configchange.Handler{Name: "dynamic broker config", Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeBroker: func(c configchange.Change) error {
				if c.Name == defaultBrokerEntity || c.Name == strconv.Itoa(int(b.ID())) {
					b.applyDynamicBrokerConfig()
				}
				return nil
			},
		}},
		configchange.Handler{Name: "topic config", Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeTopic: b.applyTopicConfigChange,
		}},
		b.throttleConfigHandler(),
		configchange.Handler{Name: "ip connection rates", Load: b.loadIPQuotas, Apply: map[string]func(configchange.Change) error{
			zkutil.ConfigTypeIP: func(configchange.Change) error { return b.loadIPQuotas() }, // quota_ip.go
		}},
	).Run(ctx)
}

// quotaConfigHandler is the client quotas' hook: one callback per entity
// type they are configured on, after a full load.
func (b *Broker) quotaConfigHandler() configchange.Handler {
	apply := func(c configchange.Change) error { return b.applyQuotaChange(c.Path()) }
	return configchange.Handler{Name: "client quotas", Load: b.loadClientQuotas,
		Apply: map[string]func(configchange.Change) error{zkutil.ConfigTypeUser: apply, zkutil.ConfigTypeClient: apply}}
}

// applyTopicConfigChange re-reads the full config of the topic and applies
// it to its hosted partitions.
func (b *Broker) applyTopicConfigChange(c configchange.Change) error {
	tc, err := b.topics.replicaTopicConfig(c.Name)
	if err == nil {
		err = b.replicas.UpdateTopicConfig(c.Name, tc)
	}
	if err != nil {
		return err
	}
	b.log.WithField("topic", c.Name).Info("applied topic config change")
	return nil
}
