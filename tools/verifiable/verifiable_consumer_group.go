package verifiable

// The Sarama side of kafka-verifiable-consumer: the group handler (claims
// hand batches to the poll loop; Cleanup waits for the loop to finish what
// it was handed) and Kafka's commitSync (one OffsetCommit with the
// session's generation, retried on coordinator errors).

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"samsa/kafka"
	"samsa/tools/internal/tool"
)

// commitFailedMessage is CommitFailedException's message in Kafka 2.8.
const commitFailedMessage = "Commit cannot be completed since the group has already rebalanced and assigned the partitions to another member. This means that the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time message processing. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records."

// rebalanceInProgressMessage is the RebalanceInProgressException a 2.8
// commitSync throws while the group rebalances.
const rebalanceInProgressMessage = "Offset commit cannot be completed since the consumer is undergoing a rebalance for auto partition assignment. You can try completing the rebalance by calling poll() and then retry the operation."

// commitAttempts bounds the retries of a commit on coordinator errors.
const commitAttempts = 10

type verifiableHandler struct {
	v   *verifiableConsumer
	ctx context.Context // the tool's context: its end means close
}

func sortedClaims(s sarama.ConsumerGroupSession) []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for topic, parts := range s.Claims() {
		for _, p := range parts {
			out = append(out, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Topic < out[j].Topic || out[i].Topic == out[j].Topic && out[i].Partition < out[j].Partition
	})
	return out
}

// Setup is onPartitionsAssigned; with --reset-policy none it also fails
// as Kafka's NoOffsetForPartitionException when a partition has no
// committed offset.
func (h *verifiableHandler) Setup(s sarama.ConsumerGroupSession) error {
	parts := sortedClaims(s)
	h.v.events.print(h.v.events.event("partitions_assigned").array("partitions", len(parts), func(i int, o *jsonLine) {
		o.str("topic", parts[i].Topic).num("partition", int64(parts[i].Partition))
	}))
	if h.v.noReset && len(parts) > 0 {
		if missing, err := h.v.uncommitted(parts); err != nil || len(missing) > 0 {
			if err == nil {
				err = fmt.Errorf("org.apache.kafka.clients.consumer.NoOffsetForPartitionException: Undefined offset with no reset policy for partitions: [%s]", strings.Join(missing, ", "))
			}
			h.v.fail(err)
			return err
		}
	}
	return nil
}

// Cleanup is onPartitionsRevoked: it hands a barrier to the poll loop,
// which prints the event once every batch handed over before is done.
func (h *verifiableHandler) Cleanup(s sarama.ConsumerGroupSession) error {
	b := &pollBarrier{parts: sortedClaims(s), closing: h.ctx.Err() != nil, done: make(chan struct{})}
	h.v.items <- pollItem{barrier: b}
	<-b.done
	return nil
}

// ConsumeClaim hands the poll loop what the claim has ready, up to
// max.poll.records at a time.
func (h *verifiableHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		var first *sarama.ConsumerMessage
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			first = m
		case <-s.Context().Done():
			return nil
		}
		msgs := []*sarama.ConsumerMessage{first}
	drain:
		for len(msgs) < maxPollRecords {
			select {
			case m, ok := <-claim.Messages():
				if !ok {
					break drain
				}
				msgs = append(msgs, m)
			default:
				break drain
			}
		}
		select {
		case h.v.items <- pollItem{sess: s, msgs: msgs}:
		case <-s.Context().Done():
			return nil // dropped, as a revoked consumer drops its buffered records
		}
	}
}

func (v *verifiableConsumer) fail(err error) {
	v.failureOnce.Do(func() {
		v.failure = err
		v.cancel()
	})
}

// uncommitted returns the partitions (as "topic-partition") that have no
// committed offset.
func (v *verifiableConsumer) uncommitted(parts []kafka.TopicPartition) ([]string, error) {
	coord, err := v.client.Coordinator(v.group)
	if err != nil {
		return nil, err
	}
	m := map[string][]int32{}
	for _, p := range parts {
		m[p.Topic] = append(m[p.Topic], p.Partition)
	}
	resp, err := coord.FetchOffset(sarama.NewOffsetFetchRequest(tool.ClientVersion, v.group, m))
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, p := range parts {
		if b := resp.GetBlock(p.Topic, p.Partition); b == nil || b.Offset < 0 {
			missing = append(missing, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
		}
	}
	return missing, nil
}

// commitSync commits offsets for the session's generation and prints
// offsets_committed, as the Kafka tool's commitSync and onComplete.
func (v *verifiableConsumer) commitSync(s sarama.ConsumerGroupSession, offsets map[kafka.TopicPartition]int64) {
	parts := make([]kafka.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		parts = append(parts, tp)
	}
	sort.Slice(parts, func(i, j int) bool {
		return parts[i].Topic < parts[j].Topic || parts[i].Topic == parts[j].Topic && parts[i].Partition < parts[j].Partition
	})
	var err error
	if len(parts) > 0 {
		err = v.commit(s, parts, offsets)
	}
	l := v.events.event("offsets_committed").array("offsets", len(parts), func(i int, o *jsonLine) {
		o.str("topic", parts[i].Topic).num("partition", int64(parts[i].Partition)).num("offset", offsets[parts[i]])
	})
	if err != nil {
		l.str("error", err.Error())
	}
	v.events.print(l.boolean("success", err == nil))
}

// commit sends one OffsetCommit and words a failure as Kafka's exception
// message; coordinator moves and network errors are retried (bounded).
func (v *verifiableConsumer) commit(s sarama.ConsumerGroupSession, parts []kafka.TopicPartition, offsets map[kafka.TopicPartition]int64) error {
	req := sarama.NewOffsetCommitRequest(v.client.Config(), v.group)
	req.ConsumerGroupGeneration = s.GenerationID()
	req.ConsumerID = s.MemberID()
	if v.instanceID != "" {
		id := v.instanceID
		req.GroupInstanceId = &id
	}
	for _, tp := range parts {
		req.AddBlock(tp.Topic, tp.Partition, offsets[tp], 0, "")
	}
	var last error
	for attempt := 0; attempt < commitAttempts; attempt++ {
		if attempt > 0 {
			time.Sleep(100 * time.Millisecond) // Kafka's retry.backoff.ms
			_ = v.client.RefreshCoordinator(v.group)
		}
		coord, err := v.client.Coordinator(v.group)
		if err != nil {
			last = err
			continue
		}
		resp, err := coord.CommitOffset(req)
		if err != nil {
			last = err
			continue
		}
		var code sarama.KError
		for _, tp := range parts {
			if e := resp.Errors[tp.Topic][tp.Partition]; e != sarama.ErrNoError {
				code = e
				break
			}
		}
		switch code {
		case sarama.ErrNoError:
			return nil
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable, sarama.ErrOffsetsLoadInProgress, sarama.ErrRequestTimedOut:
			last = code
			continue
		case sarama.ErrUnknownMemberId, sarama.ErrIllegalGeneration:
			return errors.New(commitFailedMessage)
		case sarama.ErrRebalanceInProgress:
			return errors.New(rebalanceInProgressMessage)
		default:
			_, msg := javaExceptionOf(code)
			return errors.New(msg)
		}
	}
	_, msg := javaExceptionOf(last)
	return errors.New(msg)
}
