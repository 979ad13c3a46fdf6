package zkconsumer

import (
	"context"
	"errors"
	"time"
)

// ErrConsumerTimeout is returned by Stream.Next when no message arrived
// within consumer.timeout.ms (Kafka's ConsumerTimeoutException). The stream
// stays usable.
var ErrConsumerTimeout = errors.New("zkconsumer: consumer.timeout.ms elapsed without a message")

// ErrClosed is returned by Stream.Next and Connector methods after Close.
var ErrClosed = errors.New("zkconsumer: connector closed")

// Message is one record handed to the application.
type Message struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp time.Time

	gen uint64     // rebalance generation the message was fetched in
	ps  *partState // the partition's offsets in that generation
}

// streamKey names a stream: (topic, thread) for static subscriptions;
// wildcard streams have an empty topic and carry every matched topic.
type streamKey struct {
	topic  string
	thread int
}

// Stream is one of a consumer's message streams (Kafka's KafkaStream with
// its ConsumerIterator). Each stream is one consumer thread id,
// "<consumerId>-<thread>", and receives the messages of the partitions the
// assignment gives to that thread.
//
// A Stream must be read by one goroutine at a time.
//
// Processing contract: a message counts as processed when the application
// calls Next again on the same stream, or MarkDone. Only processed messages
// are committed (automatically, at rebalance, at Close, or by
// Connector.CommitOffsets); messages fetched ahead and still queued never
// are. A rebalance (and Close) waits up to rebalance.processing.wait.ms for
// the message in hand to be marked before it commits, so marking right
// after the work avoids rebalance duplicates. A message marked only after
// that wait is not committed by this consumer, because its partition may
// already belong to another one: it will be delivered again
// (at-least-once).
type Stream struct {
	c    *Connector
	key  streamKey
	ch   chan *Message
	held *Message // handed out, not yet marked processed; guarded by c.mu
}

// Topic is the stream's topic, or "" for a wildcard stream.
func (s *Stream) Topic() string { return s.key.topic }

// Thread is the stream's thread number (the suffix of its thread id).
func (s *Stream) Thread() int { return s.key.thread }

// Next marks the previous message of this stream as processed and returns
// the next one. It blocks until a message arrives, ctx ends (ctx.Err()),
// consumer.timeout.ms passes (ErrConsumerTimeout) or the connector closes
// (ErrClosed). While a rebalance runs it hands out nothing: it waits until
// the rebalance has ended and returns a message of the new assignment.
func (s *Stream) Next(ctx context.Context) (*Message, error) {
	s.MarkDone()
	select {
	case <-s.c.quit:
		return nil, ErrClosed
	default:
	}
	var timeout <-chan time.Time
	if d := s.c.cfg.ConsumerTimeout; d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	for {
		if resume := s.c.pausedChan(); resume != nil {
			select {
			case <-resume:
				continue
			case <-s.c.quit:
				return nil, ErrClosed
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-timeout:
				return nil, ErrConsumerTimeout
			}
		}
		select {
		case m := <-s.ch:
			if !s.c.handOut(s, m) {
				// Fetched before a rebalance, or queued while one runs:
				// its partition may move; the owner fetches it again.
				continue
			}
			s.c.metrics.messages.Mark(1)
			return m, nil
		case <-s.c.quit:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, ErrConsumerTimeout
		}
	}
}

// MarkDone marks the message last returned by Next as processed without
// waiting for another one, so that a following commit includes it (for
// example at the end of a batch). It is a no-op when there is none.
func (s *Stream) MarkDone() { s.c.markDone(s) }

// drain empties the queue of messages from an ended generation.
func (s *Stream) drain() {
	for range cap(s.ch) + 1 {
		select {
		case <-s.ch:
		default:
			return
		}
	}
}
