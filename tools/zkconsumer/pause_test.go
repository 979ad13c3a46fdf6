package zkconsumer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"samsa/internal/testwait"
)

// TestZKConsumerRebalanceWaitsForMessageInHand: c1 holds message 19 (the
// 20th) when c2's join makes it rebalance. The rebalance pauses c1's stream
// and waits; once the application marks the message, the rebalance
// commits 20, so the next owner would not see it again.
func TestZKConsumerRebalanceWaitsForMessageInHand(t *testing.T) {
	e := newE2E(t, 1, "hand", 1)
	e.produce(t, 0, 50)
	cfg := e.config("g", "c1")
	cfg.AutoCommitInterval = time.Hour
	cfg.RebalanceProcessingWait = 20 * time.Second
	c1 := newConnector(t, cfg)
	s1 := startStatic(t, c1, map[string]int{"hand": 1})["hand"][0]
	if last := consumeN(t, s1, 20)[19]; last.Offset != 19 {
		t.Fatalf("20th message has offset %d", last.Offset)
	}
	c2 := newConnector(t, e.config("g", "c2"))
	startStatic(t, c2, map[string]int{"hand": 1})
	testwait.For(t, 30*time.Second, func() error {
		if c1.pausedChan() == nil {
			return errors.New("c1 has not paused its streams")
		}
		return nil
	})
	zk := e.cluster.ZooKeeper(t)
	if off, err := zk.GetConsumerOffset("g", "hand", 0); err == nil && off >= 20 {
		t.Fatalf("offset %d committed before the message in hand was marked", off)
	}
	s1.MarkDone()
	testwait.For(t, 30*time.Second, func() error {
		off, err := zk.GetConsumerOffset("g", "hand", 0)
		if err != nil || off != 20 {
			return fmt.Errorf("committed offset %d (%v), want 20", off, err)
		}
		return nil
	})
	// c1 keeps the partition (c2 gets nothing) and resumes after 19.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := s1.Next(ctx)
	if err != nil || m.Offset != 20 {
		t.Fatalf("after the rebalance: message %+v, %v; want offset 20", m, err)
	}
	s1.MarkDone() // or the rebalance at c2's Close, and c1's Close, would wait
}

// TestZKConsumerRebalanceWaitTimesOut: when the message in hand is not
// marked within rebalance.processing.wait.ms, the rebalance commits what
// was processed (19) and goes on; marking the message afterwards does not
// count, and it is delivered again (at-least-once).
func TestZKConsumerRebalanceWaitTimesOut(t *testing.T) {
	e := newE2E(t, 1, "late", 1)
	e.produce(t, 0, 50)
	cfg := e.config("g", "c1")
	cfg.AutoCommitInterval = time.Hour
	cfg.RebalanceProcessingWait = 200 * time.Millisecond
	c1 := newConnector(t, cfg)
	s1 := startStatic(t, c1, map[string]int{"late": 1})["late"][0]
	consumeN(t, s1, 20)
	c2 := newConnector(t, e.config("g", "c2"))
	startStatic(t, c2, map[string]int{"late": 1})
	testwait.For(t, 30*time.Second, func() error {
		if n, _ := c1.Rebalances(); n < 2 {
			return errors.New("c1 has not rebalanced after c2 joined")
		}
		return nil
	})
	zk := e.cluster.ZooKeeper(t)
	if off, err := zk.GetConsumerOffset("g", "late", 0); err != nil || off != 19 {
		t.Fatalf("committed offset %d (%v), want 19", off, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := s1.Next(ctx) // marks offset 19 too late: it comes again
	if err != nil || m.Offset != 19 {
		t.Fatalf("after the rebalance: message %+v, %v; want offset 19 again", m, err)
	}
}
