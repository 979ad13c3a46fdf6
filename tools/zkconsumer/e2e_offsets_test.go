package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// consumeN reads exactly n messages from s (marking all but the last as
// processed, as Next does) and returns them.
func consumeN(t *testing.T, s *Stream, n int) []*Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := make([]*Message, 0, n)
	for len(out) < n {
		m, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("after %d messages: %v", len(out), err)
		}
		out = append(out, m)
	}
	return out
}

// TestZKConsumerCommitsOnlyProcessed: of 100 messages in one partition,
// the application takes 10. Read-ahead (the rest, already fetched) is never
// committed; the 10th counts only once marked.
func TestZKConsumerCommitsOnlyProcessed(t *testing.T) {
	e := newE2E(t, 1, "one", 1)
	e.produce(t, 0, 100)
	cfg := e.config("g", "c1")
	cfg.AutoCommitEnable = false
	c := newConnector(t, cfg)
	s := startStatic(t, c, map[string]int{"one": 1})["one"][0]
	msgs := consumeN(t, s, 10)
	if msgs[0].Offset != 0 || msgs[9].Offset != 9 {
		t.Fatalf("offsets %d..%d, want 0..9", msgs[0].Offset, msgs[9].Offset)
	}
	testwait.For(t, 10*time.Second, func() error { // the fetcher has read ahead
		if len(s.ch) == 0 {
			return errors.New("no read-ahead queued yet")
		}
		return nil
	})
	zk := e.cluster.ZooKeeper(t)
	commitAndRead := func() int64 {
		t.Helper()
		if err := c.CommitOffsets(context.Background()); err != nil {
			t.Fatal(err)
		}
		off, err := zk.GetConsumerOffset("g", "one", 0)
		if err != nil {
			t.Fatal(err)
		}
		return off
	}
	if got := commitAndRead(); got != 9 {
		t.Fatalf("committed %d, want 9 (messages 0..8 processed, 9 in hand)", got)
	}
	s.MarkDone()
	if got := commitAndRead(); got != 10 {
		t.Fatalf("committed %d after MarkDone, want 10", got)
	}
}

// TestZKConsumerRebalanceCommit: with auto.commit.enable a rebalance
// commits what was processed before releasing ownership, so the next
// owner resumes there; without it nothing is committed at rebalance and
// the next owner starts again from the last manual commit (the duplicates
// the old consumer was known for).
func TestZKConsumerRebalanceCommit(t *testing.T) {
	for _, auto := range []bool{true, false} {
		t.Run(fmt.Sprintf("auto.commit.enable=%v", auto), func(t *testing.T) {
			e := newE2E(t, 1, "one", 1)
			e.produce(t, 0, 50)
			cfg := e.config("g", "c1")
			cfg.AutoCommitEnable = auto
			cfg.AutoCommitInterval = time.Hour
			c1 := newConnector(t, cfg)
			s1 := startStatic(t, c1, map[string]int{"one": 1})["one"][0]
			consumeN(t, s1, 20)
			s1.MarkDone()
			// c2 sorts after c1 and, with one partition, gets nothing: the
			// join only makes c1 rebalance (and commit, or not).
			c2 := newConnector(t, e.config("g", "c2"))
			startStatic(t, c2, map[string]int{"one": 1})
			zk := e.cluster.ZooKeeper(t)
			if auto {
				testwait.For(t, 30*time.Second, func() error {
					off, err := zk.GetConsumerOffset("g", "one", 0)
					if err != nil || off != 20 {
						return fmt.Errorf("committed offset %d (%v), want 20", off, err)
					}
					return nil
				})
			} else {
				testwait.For(t, 30*time.Second, func() error {
					if n, _ := c1.Rebalances(); n < 2 {
						return errors.New("c1 has not rebalanced after c2 joined")
					}
					return nil
				})
				if off, err := zk.GetConsumerOffset("g", "one", 0); !errors.Is(err, zkutil.ErrNoNode) {
					t.Fatalf("offset %d committed without auto commit (%v)", off, err)
				}
			}
		})
	}
}

// TestZKConsumerAutoOffsetReset: without a committed offset, largest
// starts at the log end and smallest at the log start.
func TestZKConsumerAutoOffsetReset(t *testing.T) {
	e := newE2E(t, 1, "r", 1)
	e.produce(t, 0, 5)
	cfg := e.config("g-largest", "c")
	cfg.AutoOffsetReset = ResetLargest
	c := newConnector(t, cfg)
	s := startStatic(t, c, map[string]int{"r": 1})["r"][0]
	// Wait until the fetcher resolved the log end, then produce more.
	testwait.For(t, 30*time.Second, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if ps := c.mu.owned[kafka.TopicPartition{Topic: "r", Partition: 0}]; ps == nil || ps.processed != 5 {
			return errors.New("start offset not resolved to 5 yet")
		}
		return nil
	})
	e.produce(t, 5, 1)
	if m := consumeN(t, s, 1)[0]; m.Offset != 5 || string(m.Value) != "m00005" {
		t.Fatalf("largest: first message at offset %d (%s), want 5", m.Offset, m.Value)
	}

	cfg = e.config("g-smallest", "c")
	c2 := newConnector(t, cfg)
	s2 := startStatic(t, c2, map[string]int{"r": 1})["r"][0]
	if m := consumeN(t, s2, 1)[0]; m.Offset != 0 {
		t.Fatalf("smallest: first message at offset %d, want 0", m.Offset)
	}
}

// TestZKConsumerTimeout: consumer.timeout.ms makes Next give up with
// ErrConsumerTimeout, and the stream stays usable.
func TestZKConsumerTimeout(t *testing.T) {
	e := newE2E(t, 1, "quiet", 1)
	cfg := e.config("g", "c")
	cfg.ConsumerTimeout = 200 * time.Millisecond
	c := newConnector(t, cfg)
	s := startStatic(t, c, map[string]int{"quiet": 1})["quiet"][0]
	start := time.Now()
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrConsumerTimeout) {
		t.Fatalf("err = %v, want ErrConsumerTimeout", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("timed out after %v", d)
	}
	e.produce(t, 0, 1)
	c.cfg.ConsumerTimeout = -1 // only this goroutine reads cfg.ConsumerTimeout now
	if m := consumeN(t, s, 1)[0]; string(m.Value) != "m00000" {
		t.Fatalf("got %s", m.Value)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

// TestZKConsumerWildcard: a whitelist consumer picks up a matching topic
// created after it started, and ignores others.
func TestZKConsumerWildcard(t *testing.T) {
	e := newE2E(t, 1, "logs-a", 2)
	e.produce(t, 0, 3)
	c := newConnector(t, e.config("g", "c"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	streams, err := c.CreateMessageStreamsByFilter(ctx, Whitelist("logs-.*"), 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range consumeN(t, streams[0], 3) {
		got[m.Topic]++
	}
	e.cluster.CreateTopic(t, "other", 1, 1)
	e.cluster.CreateTopic(t, "logs-b", 1, 1)
	p := e.cluster.SyncProducer(t, nil)
	for _, topic := range []string{"other", "logs-b"} {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("x")}); err != nil {
			t.Fatal(err)
		}
	}
	// The topic creations rebalance the consumer: a message in hand may be
	// delivered again (at-least-once), so read until logs-b shows up.
	for i := 0; got["logs-b"] == 0 && i < 20; i++ {
		got[consumeN(t, streams[0], 1)[0].Topic]++
	}
	if got["logs-a"] < 3 || got["logs-b"] != 1 || got["other"] != 0 {
		t.Fatalf("messages per topic: %v", got)
	}
}

// TestZKConsumerAutoCommit: processed offsets reach ZooKeeper every
// auto.commit.interval.ms without any call from the application.
func TestZKConsumerAutoCommit(t *testing.T) {
	e := newE2E(t, 1, "ac", 1)
	e.produce(t, 0, 20)
	cfg := e.config("g", "c")
	cfg.AutoCommitInterval = 100 * time.Millisecond
	c := newConnector(t, cfg)
	s := startStatic(t, c, map[string]int{"ac": 1})["ac"][0]
	consumeN(t, s, 7)
	s.MarkDone()
	zk := e.cluster.ZooKeeper(t)
	testwait.For(t, 10*time.Second, func() error {
		off, err := zk.GetConsumerOffset("g", "ac", 0)
		if err != nil || off != 7 {
			return fmt.Errorf("offset %d (%v), want 7", off, err)
		}
		return nil
	})
}
