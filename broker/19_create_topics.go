package broker

// CreateTopics: v0-6
//
// Behaviour:
//   - Only the active controller answers; other brokers answer
//     NOT_CONTROLLER per topic and clients retry there (Kafka 2.8 ZooKeeper
//     mode does not forward).
//   - Validation, per topic (Kafka ZkAdminManager.createTopics): legal name
//     (INVALID_TOPIC_EXCEPTION, also for a '.'/'_' collision), not existing
//     (TOPIC_ALREADY_EXISTS, also while marked for deletion), partitions > 0
//     (INVALID_PARTITIONS), 0 < replication factor <= live brokers
//     (INVALID_REPLICATION_FACTOR), a manual assignment numbered 0..n-1 on
//     live brokers without duplicates (INVALID_REPLICA_ASSIGNMENT), known
//     topic configs with valid values (INVALID_CONFIG). -1 partitions or
//     replication factor take num.partitions / default.replication.factor
//     (KIP-464, v4+). A topic named twice answers INVALID_REQUEST.
//   - Replicas are assigned with assign.Replicas (Kafka's
//     algorithm, rack-aware when every live broker has a rack).
//   - The topic is written with zkutil.CreateTopicWithID (/config/topics/<t>
//     and /brokers/topics/<t> with a new topic id, in one multi); the
//     controller elects leaders. With timeout_ms
//     > 0 the answer waits, like Kafka's CreateTopics purgatory, until the
//     metadata cache shows a leader for every partition; topics still
//     without leaders at the deadline answer REQUEST_TIMED_OUT (they are
//     created nonetheless).
//   - Authorization (Kafka 2.8): Create on the cluster, else Create per
//     topic (TOPIC_AUTHORIZATION_FAILED "Authorization failed.", after the
//     duplicate check); the v5+ sizes and configs only with DescribeConfigs
//     on the topic (else topic_config_error_code TOPIC_AUTHORIZATION_FAILED).
//   - validate_only (v1+) validates and writes nothing.
//   - v5+ answers carry the partition count, replication factor and the
//     topic's full effective config (source DYNAMIC_TOPIC_CONFIG for
//     overrides, DEFAULT_CONFIG otherwise).
//
// Version notes:
//   - v1: validate_only, error messages. v2: throttle.
//   - v4: -1 partitions / replication factor (KIP-464).
//   - v5: flexible; configs in the answer (KIP-525). v6: strict
//     controller_mutation_rate, THROTTLING_QUOTA_EXCEEDED per topic
//     (KIP-599; quota_mutation.go).

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/config"
)

// Kafka's ConfigSource ids (DescribeConfigs and CreateTopics v5+).
const (
	configSourceDynamicTopic int8 = 1
	configSourceDefault      int8 = 5
)

func (b *Broker) handleCreateTopics(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	created := map[string]int{}
	clusterCreate := b.authorizedCluster(r, acl.OpCreate)
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		var err error
		switch {
		case !b.IsController():
			err = errNotController
		case count[t.Topic] > 1:
			err = fmt.Errorf("%w: topic %q named more than once", errInvalidRequest, t.Topic)
		case !clusterCreate && !b.authorizedTopic(r, acl.OpCreate, t.Topic):
			rt.ErrorCode, rt.ErrorMessage = kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr("Authorization failed.")
		default:
			var n int
			n, err = b.createOneTopic(r, req, t, &rt)
			if err == nil && !req.ValidateOnly {
				created[t.Topic] = n
			}
			if err == nil && !b.authorizedTopic(r, acl.OpDescribeConfigs, t.Topic) {
				// Kafka returns configs and sizes only with DescribeConfigs.
				rt.Configs, rt.NumPartitions, rt.ReplicationFactor = nil, -1, -1
				rt.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
			}
		}
		if err != nil {
			b.setTopicErr(&rt.ErrorCode, &rt.ErrorMessage, err)
			rt.Configs = nil
			rt.NumPartitions, rt.ReplicationFactor = -1, -1
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(created) > 0 && req.TimeoutMillis > 0 {
		deadline := b.opts.Now().Add(time.Duration(req.TimeoutMillis) * time.Millisecond)
		unpark := r.park()
		missing := b.waitForLeaders(r.ctx, created, deadline)
		unpark()
		for _, m := range missing {
			for i := range resp.Topics {
				if resp.Topics[i].Topic == m {
					resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
					msg := "timed out waiting for the partitions' leaders"
					resp.Topics[i].ErrorMessage = &msg
				}
			}
		}
	}
	return resp, nil
}

// createOneTopic validates and (unless validate_only) creates one topic,
// filling the v5+ fields of rt. It returns the number of partitions.
func (b *Broker) createOneTopic(r *request, req *kmsg.CreateTopicsRequest, t kmsg.CreateTopicsRequestTopic, rt *kmsg.CreateTopicsResponseTopic) (int, error) {
	spec := topicSpec{name: t.Topic, partitions: t.NumPartitions, rf: t.ReplicationFactor, configs: map[string]string{}}
	for _, c := range t.Configs {
		if c.Value == nil {
			return 0, fmt.Errorf("%w: null value for config %q", errInvalidConfig, c.Name)
		}
		spec.configs[c.Name] = *c.Value
	}
	if len(t.ReplicaAssignment) > 0 {
		spec.assignment = make(map[int32][]int32, len(t.ReplicaAssignment))
		for _, a := range t.ReplicaAssignment {
			if _, dup := spec.assignment[a.Partition]; dup {
				return 0, fmt.Errorf("%w: partition %d assigned twice", errInvalidReplicaAssignment, a.Partition)
			}
			spec.assignment[a.Partition] = a.Replicas
		}
	}
	if err := validateTopicName(t.Topic); err != nil {
		return 0, err
	}
	if _, ok := b.meta.Snapshot().Topics[t.Topic]; ok {
		return 0, fmt.Errorf("%w: topic %q already exists", errTopicExists, t.Topic)
	}
	assignment, err := b.planTopic(spec)
	if err != nil {
		return 0, err
	}
	if !req.ValidateOnly {
		if err := r.recordMutation(len(assignment)); err != nil {
			return 0, err // controller_mutation_rate (quota_mutation.go)
		}
		if err := b.createTopic(spec, assignment); err != nil {
			return 0, err
		}
	}
	if req.Version >= 5 {
		rt.NumPartitions = int32(len(assignment))
		rt.ReplicationFactor = int16(len(assignment[0]))
		if tc, err := config.TopicFromOverrides(b.cfg, spec.configs); err == nil {
			rt.Configs = topicConfigEntries(tc)
		}
	}
	return len(assignment), nil
}

// topicConfigEntries lists every topic key with its effective value.
func topicConfigEntries(tc *config.Topic) []kmsg.CreateTopicsResponseTopicConfig {
	var out []kmsg.CreateTopicsResponseTopicConfig
	for _, k := range config.TopicKeys {
		v, override, ok := tc.Value(k.Name)
		if !ok {
			continue
		}
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = k.Name
		c.Value = &v
		c.Source = configSourceDefault
		if override {
			c.Source = configSourceDynamicTopic
		}
		out = append(out, c)
	}
	return out
}

// setTopicErr fills a topic-level error code and message.
func (b *Broker) setTopicErr(code *int16, msg **string, err error) {
	*code = b.errorCode(err)
	s := err.Error()
	var ke *kerr.Error
	if errors.As(err, &ke) {
		s = ke.Message
		if ke == kerr.ThrottlingQuotaExceeded {
			s = ke.Description // Kafka's ThrottlingQuotaExceededException message
		}
	}
	*msg = &s
}
