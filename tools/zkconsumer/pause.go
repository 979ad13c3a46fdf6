package zkconsumer

import (
	"context"
	"time"
)

// Pausing closes the window in which a message the application is
// processing when a rebalance begins would be neither committed by this
// consumer nor kept from the next owner: a rebalance (and Close) first
// stops Next from handing out messages, then waits, at most
// rebalance.processing.wait.ms, until every stream's handed-out message is
// marked processed (MarkDone, or the Next call that then blocks), and only
// then stops the fetchers and commits. Messages that arrive in a stream's
// queue while it is paused are dropped, like the rest of the read-ahead:
// the next owner fetches them again from the committed offset.

// pauseStreams pauses the streams (until resumeStreams) and waits until no
// stream holds an unprocessed message of the current generation, until
// rebalance.processing.wait.ms passes or until ctx ends. Messages still
// held then are logged: they are not committed and will be delivered
// again.
func (c *Connector) pauseStreams(ctx context.Context) {
	c.mu.Lock()
	if c.mu.resume == nil {
		c.mu.resume = make(chan struct{})
	}
	held := c.heldLocked()
	c.mu.Unlock()
	if len(held) == 0 {
		return
	}
	var expired <-chan time.Time
	if d := c.cfg.RebalanceProcessingWait; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expired = t.C
	} else {
		expired = closedTimeChan
	}
	for len(held) > 0 {
		select {
		case <-c.idle:
		case <-expired:
			c.warnHeld(held)
			return
		case <-ctx.Done():
			c.warnHeld(held)
			return
		}
		c.mu.Lock()
		held = c.heldLocked()
		c.mu.Unlock()
	}
}

// closedTimeChan is a channel that is always ready (no wait).
var closedTimeChan = func() <-chan time.Time {
	ch := make(chan time.Time)
	close(ch)
	return ch
}()

// heldLocked returns the streams holding an unprocessed message of the
// current generation. The caller holds mu.
func (c *Connector) heldLocked() map[*Stream]*Message {
	var out map[*Stream]*Message
	for _, s := range c.mu.streams {
		if m := s.held; m != nil && m.gen == c.mu.gen {
			if out == nil {
				out = make(map[*Stream]*Message)
			}
			out[s] = m
		}
	}
	return out
}

// warnHeld logs the messages a rebalance or Close stopped waiting for.
func (c *Connector) warnHeld(held map[*Stream]*Message) {
	for s, m := range held {
		c.log.WithField("stream", ThreadID{Consumer: c.id, Thread: s.key.thread}.String()).
			WithField("topic", m.Topic).WithField("partition", m.Partition).WithField("offset", m.Offset).
			Warn("message still being processed after rebalance.processing.wait.ms; not committed, it will be delivered again")
	}
}

// resumeStreams lets Next hand out messages again, unless Close began.
func (c *Connector) resumeStreams() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.resume != nil && !c.mu.closing {
		close(c.mu.resume)
		c.mu.resume = nil
	}
}

// pausedChan returns the channel closed when the streams resume, or nil
// when they are not paused.
func (c *Connector) pausedChan() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.resume
}

// handOut records m as s's handed-out message and reports whether the
// application may have it: not when its generation ended or the streams
// are paused (then it is dropped; the next owner fetches it again).
func (c *Connector) handOut(s *Stream, m *Message) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.gen != c.mu.gen || c.mu.resume != nil {
		return false
	}
	s.held = m
	return true
}

// markDone records s's handed-out message as processed, unless its
// generation ended, and wakes a rebalance waiting for it.
func (c *Connector) markDone(s *Stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := s.held
	if m == nil {
		return
	}
	s.held = nil
	if m.gen == c.mu.gen && m.ps.processed < m.Offset+1 {
		m.ps.processed = m.Offset + 1
	}
	if c.mu.resume != nil {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
}
