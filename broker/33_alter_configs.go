package broker

// AlterConfigs: v0-2
//
// Behaviour:
//   - Topics: the request's configs replace all of the topic's overrides
//     (Kafka's non-incremental semantics); they are validated by name and
//     value (INVALID_CONFIG), written to /config/topics/<t>, and announced
//     under /config/changes so every broker applies them to its replicas.
//     Unknown topics answer UNKNOWN_TOPIC_OR_PARTITION.
//   - validate_only validates and writes nothing.
//   - Brokers (resource name = this broker's id, or "" for the cluster
//     default): the configs replace all dynamic overrides of the entity in
//     /config/brokers (dynamic_broker_config.go: dynamic keys only, else
//     INVALID_REQUEST; values validated as a full broker config). Other
//     resource types answer INVALID_REQUEST.
//   - Any broker may answer (Kafka 2.8 writes ZooKeeper from the receiving
//     broker).
//   - Authorization: AlterConfigs on the cluster for BROKER resources
//     (CLUSTER_AUTHORIZATION_FAILED), on the topic for TOPIC
//     (TOPIC_AUTHORIZATION_FAILED), per resource, as Kafka 2.8.
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
)

func (b *Broker) handleAlterConfigs(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		if code, msg := b.configResourceDenied(r, res.ResourceType, res.ResourceName, acl.OpAlterConfigs); code != 0 {
			rr.ErrorCode, rr.ErrorMessage = code, msg
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		err := func() error {
			if res.ResourceType == kmsg.ConfigResourceTypeBroker {
				return b.alterBroker(res, req.ValidateOnly)
			}
			if res.ResourceType != kmsg.ConfigResourceTypeTopic {
				return fmt.Errorf("%w: only topic configs can be altered", errInvalidRequest)
			}
			if _, ok := b.meta.Snapshot().Topics[res.ResourceName]; !ok {
				return fmt.Errorf("%w: %q", errUnknownTopic, res.ResourceName)
			}
			overrides := map[string]string{}
			for _, c := range res.Configs {
				if c.Value == nil {
					return fmt.Errorf("%w: null value for %q", errInvalidConfig, c.Name)
				}
				overrides[c.Name] = *c.Value
			}
			if err := validateTopicConfigs(overrides); err != nil {
				return err
			}
			if req.ValidateOnly {
				return nil
			}
			return b.writeTopicConfig(res.ResourceName, overrides)
		}()
		if err != nil {
			b.setTopicErr(&rr.ErrorCode, &rr.ErrorMessage, err)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}
