package broker

// DeleteTopics: v0-5
//
// Behaviour:
//   - Only the active controller answers (NOT_CONTROLLER elsewhere).
//   - delete.topic.enable=false: TOPIC_DELETION_DISABLED, nothing marked.
//   - A topic the metadata cache does not know: UNKNOWN_TOPIC_OR_PARTITION.
//   - Otherwise the topic is marked with /admin/delete_topics/<t> (an
//     existing mark is fine) and the controller deletes it. With timeout_ms
//     > 0 the answer waits until the topic has left the metadata cache;
//     topics still present at the deadline answer REQUEST_TIMED_OUT (their
//     deletion goes on). Then, within the timeout and for at most
//     deletionGrace, the answer also waits for the controller to finish
//     (the /admin/delete_topics marks gone): Kafka's pipelined ZooKeeper
//     deletes finish within milliseconds, so clients (Sarama's functional
//     tests) recreate a topic right after deleting it, which would meet
//     TOPIC_ALREADY_EXISTS ("marked for deletion") while ours still runs.
//     A deletion that stalls (a replica's broker is down) still answers
//     success once the metadata has dropped the topic, as Kafka.
//   - A topic named twice answers INVALID_REQUEST.
//   - Authorization: Delete per topic (TOPIC_AUTHORIZATION_FAILED, decided
//     before the existence check), as Kafka 2.8.
//
// Version notes:
//   - v1: throttle. v4: flexible. v5: error messages; strict
//     controller_mutation_rate, THROTTLING_QUOTA_EXCEEDED per topic
//     (KIP-599; quota_mutation.go).
//   - v6 (topic ids) is not offered.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/zkutil"
)

func (b *Broker) handleDeleteTopics(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	count := map[string]int{}
	for _, t := range req.TopicNames {
		count[t]++
	}
	var marked []int
	for _, name := range req.TopicNames {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic = kmsg.StringPtr(name)
		var err error
		switch {
		case !b.IsController():
			err = errNotController
		case count[name] > 1:
			err = fmt.Errorf("%w: topic %q named more than once", errInvalidRequest, name)
		case !b.cfg.DeleteTopicEnable:
			err = errTopicDeletionDisabled
		case !b.authorizedTopic(r, acl.OpDelete, name):
			err = kerr.TopicAuthorizationFailed // before the existence check
		default:
			parts, ok := b.meta.Snapshot().Topics[name]
			switch {
			case !ok:
				err = fmt.Errorf("%w: %q", errUnknownTopic, name)
			case r.recordMutation(len(parts)) != nil: // controller_mutation_rate (quota_mutation.go)
				err = errThrottlingQuotaExceeded
			default:
				if e := b.zk.MarkTopicForDeletion(name); e != nil && !errors.Is(e, zkutil.ErrMarkedForDeletion) {
					err = e
				}
			}
		}
		if err != nil {
			b.setTopicErr(&rt.ErrorCode, &rt.ErrorMessage, err)
		} else {
			marked = append(marked, len(resp.Topics))
			b.log.WithField("topic", name).Info("topic marked for deletion")
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(marked) == 0 || req.TimeoutMillis <= 0 {
		return resp, nil
	}
	deadline := b.opts.Now().Add(time.Duration(req.TimeoutMillis) * time.Millisecond)
	defer r.park()() // the rest waits for the controller
	names := make([]string, 0, len(marked))
	for _, i := range marked {
		names = append(names, *resp.Topics[i].Topic)
	}
	for {
		next := b.metaUpdates.next()
		snap := b.meta.Snapshot()
		pending := marked[:0:0]
		for _, i := range marked {
			if _, ok := snap.Topics[*resp.Topics[i].Topic]; ok {
				pending = append(pending, i)
			}
		}
		marked = pending
		if len(marked) == 0 {
			b.awaitDeletionsDone(r.ctx, names, minTime(deadline, b.opts.Now().Add(deletionGrace)))
			return resp, nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-next:
		case <-t.C:
		case <-r.ctx.Done():
		}
		t.Stop()
		if r.ctx.Err() != nil {
			break
		}
	}
	for _, i := range marked {
		resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
	}
	return resp, nil
}

// deletionGrace bounds how long DeleteTopics waits for the controller to
// finish a deletion after the topic left the metadata.
const deletionGrace = 5 * time.Second

// awaitDeletionsDone waits until none of topics is marked under
// /admin/delete_topics (the controller removes the mark last), until
// deadline, or until ctx ends.
func (b *Broker) awaitDeletionsDone(ctx context.Context, topics []string, deadline time.Time) {
	wake := make(chan struct{}, 1)
	cancel := b.zk.WatchChildren(zkutil.DeleteTopicsPath(), func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer cancel()
	t := time.NewTimer(deadline.Sub(b.opts.Now()))
	defer t.Stop()
	for {
		marks, err := b.zk.Children(zkutil.DeleteTopicsPath())
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return
		}
		if !slices.ContainsFunc(topics, func(t string) bool { return slices.Contains(marks, t) }) {
			return
		}
		select {
		case <-wake:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
