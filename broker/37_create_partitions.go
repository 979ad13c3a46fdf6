package broker

// CreatePartitions: v0-3
//
// Behaviour:
//   - Only the active controller answers (NOT_CONTROLLER elsewhere).
//   - Validation (Kafka AdminZkClient.addPartitions): the topic exists
//     (UNKNOWN_TOPIC_OR_PARTITION) and is not marked for deletion
//     (INVALID_TOPIC_EXCEPTION); the new count is larger than the current
//     one (INVALID_PARTITIONS); a manual assignment names exactly the new
//     partitions, each with the topic's replication factor, on live
//     brokers, without duplicates (INVALID_REPLICA_ASSIGNMENT).
//   - Without an assignment, the new partitions are placed with Kafka's
//     algorithm starting from the first live broker whose id is at least
//     partition 0's first replica (assign.StartIndex, Kafka's
//     createNewPartitionsAssignment), so the layout continues the existing one.
//   - The assignment znode is rewritten conditionally on its zkVersion; the
//     controller creates the partitions. With timeout_ms > 0 the answer
//     waits for their leaders (REQUEST_TIMED_OUT at the deadline).
//   - validate_only validates and writes nothing.
//   - Authorization: Alter per topic (TOPIC_AUTHORIZATION_FAILED "The topic
//     authorization is failed.", after the duplicate check), as Kafka 2.8.
//
// Version notes:
//   - v1: throttle semantics only. v2: flexible. v3: strict
//     controller_mutation_rate, THROTTLING_QUOTA_EXCEEDED per topic
//     (KIP-599; quota_mutation.go).

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/assign"
	"samsa/broker/acl"
	"samsa/zkutil"
)

func (b *Broker) handleCreatePartitions(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	waitFor := map[string]int{}
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		var err error
		switch {
		case !b.IsController():
			err = errNotController
		case count[t.Topic] > 1:
			err = fmt.Errorf("%w: topic %q named more than once", errInvalidRequest, t.Topic)
		case !b.authorizedTopic(r, acl.OpAlter, t.Topic):
			rt.ErrorCode, rt.ErrorMessage = kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr("The topic authorization is failed.")
		default:
			err = b.addPartitions(r, t, req.ValidateOnly)
			if err == nil && !req.ValidateOnly {
				waitFor[t.Topic] = int(t.Count)
			}
		}
		if err != nil {
			b.setTopicErr(&rt.ErrorCode, &rt.ErrorMessage, err)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(waitFor) > 0 && req.TimeoutMillis > 0 {
		deadline := b.opts.Now().Add(time.Duration(req.TimeoutMillis) * time.Millisecond)
		unpark := r.park()
		missing := b.waitForLeaders(r.ctx, waitFor, deadline)
		unpark()
		for _, m := range missing {
			for i := range resp.Topics {
				if resp.Topics[i].Topic == m {
					resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
				}
			}
		}
	}
	return resp, nil
}

func (b *Broker) addPartitions(r *request, t kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
	cur, zkv, err := b.zk.GetTopicAssignment(t.Topic)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", errUnknownTopic, t.Topic, err)
	}
	if marked, err := b.zk.GetTopicsMarkedForDeletion(); err == nil && slices.Contains(marked, t.Topic) {
		return fmt.Errorf("%w: topic %q is queued for deletion", errInvalidTopic, t.Topic)
	}
	existing := int32(len(cur.Partitions))
	if t.Count <= existing {
		return fmt.Errorf("%w: topic %q has %d partitions, which is not fewer than the requested %d",
			errInvalidPartitions, t.Topic, existing, t.Count)
	}
	p0 := cur.Partitions[0]
	rf := len(p0)
	snap := b.meta.Snapshot()
	var added map[int32][]int32
	if t.Assignment != nil {
		if int32(len(t.Assignment)) != t.Count-existing {
			return fmt.Errorf("%w: %d assignments for %d new partitions", errInvalidReplicaAssignment,
				len(t.Assignment), t.Count-existing)
		}
		full := map[int32][]int32{}
		for i, a := range t.Assignment {
			if len(a.Replicas) != rf {
				return fmt.Errorf("%w: partition %d has %d replicas, the topic has %d", errInvalidReplicaAssignment,
					existing+int32(i), len(a.Replicas), rf)
			}
			full[int32(i)] = a.Replicas
		}
		if _, err := validateAssignment(snap, full); err != nil {
			return err
		}
		added = map[int32][]int32{}
		for i, rs := range full {
			added[existing+i] = rs
		}
	} else {
		brokers := liveBrokerMeta(snap)
		start := assign.StartIndex(brokers, p0)
		added, err = assign.Replicas(brokers, int(t.Count-existing), rf, start, int(existing), nil)
		if err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	if err := r.recordMutation(int(t.Count - existing)); err != nil {
		return err // controller_mutation_rate (quota_mutation.go)
	}
	next := zkutil.TopicAssignment{Version: cur.Version, TopicID: cur.TopicID, Partitions: map[int32][]int32{},
		AddingReplicas: cur.AddingReplicas, RemovingReplicas: cur.RemovingReplicas}
	for p, rs := range cur.Partitions {
		next.Partitions[p] = rs
	}
	for p, rs := range added {
		next.Partitions[p] = rs
	}
	if _, err := b.zk.SetTopicAssignment(t.Topic, next, zkv); err != nil {
		return err
	}
	b.log.WithField("topic", t.Topic).WithField("partitions", t.Count).Info("added partitions")
	return nil
}
