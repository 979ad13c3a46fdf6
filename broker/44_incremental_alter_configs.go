package broker

// IncrementalAlterConfigs: v0-1
//
// Behaviour:
//   - Topics: each config is SET, DELETEd (back to the default), APPENDed
//     to or SUBTRACTed from (list keys only, INVALID_CONFIG otherwise)
//     against the topic's current overrides (KIP-339); the result is
//     validated, written to /config/topics/<t> and announced under
//     /config/changes. A key named twice answers INVALID_REQUEST.
//   - validate_only validates and writes nothing.
//   - Brokers (resource name = this broker's id, or "" for the cluster
//     default): dynamic keys only (others INVALID_REQUEST "cannot update
//     these configs dynamically"), validated as a full broker config and
//     stored in /config/brokers/<id|<default>> with a /config/changes
//     notification (dynamic_broker_config.go). Samsa does not apply them at
//     run time yet.
//   - Broker loggers (KIP-412, resource name = this broker's id): SET of
//     the "root" logger's level (log4j names) applies at once; other
//     loggers and levels are INVALID_CONFIG, DELETE/APPEND/SUBTRACT
//     INVALID_REQUEST (broker_logger.go).
//   - Other resource types answer INVALID_REQUEST.
//   - Authorization: AlterConfigs on the cluster for BROKER and BROKER_LOGGER
//     (CLUSTER_AUTHORIZATION_FAILED), on the topic for TOPIC
//     (TOPIC_AUTHORIZATION_FAILED), per resource, as Kafka 2.8.
//
// Version notes:
//   - v1: flexible.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/config"
)

func (b *Broker) handleIncrementalAlterConfigs(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, res := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		if code, msg := b.configResourceDenied(r, res.ResourceType, res.ResourceName, acl.OpAlterConfigs); code != 0 {
			rr.ErrorCode, rr.ErrorMessage = code, msg
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		var err error
		switch res.ResourceType {
		case kmsg.ConfigResourceTypeBroker:
			err = b.incrementalAlterBroker(res, req.ValidateOnly)
		case kmsg.ConfigResourceTypeBrokerLogger:
			err = b.incrementalAlterBrokerLogger(res, req.ValidateOnly)
		default:
			err = b.incrementalAlterTopic(res, req.ValidateOnly)
		}
		if err != nil {
			b.setTopicErr(&rr.ErrorCode, &rr.ErrorMessage, err)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func (b *Broker) incrementalAlterTopic(res kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if res.ResourceType != kmsg.ConfigResourceTypeTopic {
		return fmt.Errorf("%w: only topic configs can be altered", errInvalidRequest)
	}
	topic := res.ResourceName
	if _, ok := b.meta.Snapshot().Topics[topic]; !ok {
		return fmt.Errorf("%w: %q", errUnknownTopic, topic)
	}
	overrides, err := b.topicOverrides(topic)
	if err != nil {
		return err
	}
	current, err := config.TopicFromOverrides(b.cfg, overrides)
	if err != nil {
		current, _ = config.TopicFromOverrides(b.cfg, nil)
	}
	seen := map[string]bool{}
	for _, c := range res.Configs {
		if seen[c.Name] {
			return fmt.Errorf("%w: config %q named twice", errInvalidRequest, c.Name)
		}
		seen[c.Name] = true
		val := ""
		if c.Value != nil {
			val = *c.Value
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			overrides[c.Name] = val
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(overrides, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if !isListKey(c.Name) {
				return fmt.Errorf("%w: %q is not a list config", errInvalidConfig, c.Name)
			}
			cur, _, _ := current.Value(c.Name)
			overrides[c.Name] = applyListOp(c.Op, cur, val)
		default:
			return fmt.Errorf("%w: unknown operation %d", errInvalidRequest, c.Op)
		}
	}
	if err := validateTopicConfigs(overrides); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	return b.writeTopicConfig(topic, overrides)
}

func isListKey(name string) bool {
	for _, k := range config.TopicKeys {
		if k.Name == name {
			return k.Type == config.TypeList
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// applyListOp applies an APPEND or SUBTRACT of IncrementalAlterConfigs to the
// comma-separated list value cur (KIP-339): APPEND adds the items of val not
// already present, SUBTRACT removes every occurrence of each item of val.
func applyListOp(op kmsg.IncrementalAlterConfigOp, cur, val string) string {
	items := splitList(cur)
	for _, v := range splitList(val) {
		if op == kmsg.IncrementalAlterConfigOpAppend && !slices.Contains(items, v) {
			items = append(items, v)
		}
		if op == kmsg.IncrementalAlterConfigOpSubtract {
			items = slices.DeleteFunc(items, func(s string) bool { return s == v })
		}
	}
	return strings.Join(items, ",")
}
