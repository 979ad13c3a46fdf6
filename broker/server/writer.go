package server

import (
	"time"
)

// queueEmpty reports whether no response is queued for the writer, so the reader goroutine may
// write the next one itself without overtaking an earlier one.
func (c *Conn) queueEmpty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.queued == 0
}

// waitForRoom blocks the reader goroutine while the queue is full (Options.MaxQueuedResponses
// responses or Options.MaxQueuedBytes request bytes). It returns false when the connection
// closes meanwhile.
func (c *Conn) waitForRoom() bool {
	return c.waitQueue(func() bool {
		return c.mu.queued < c.srv.opts.MaxQueuedResponses && c.mu.queuedBytes < c.srv.opts.MaxQueuedBytes
	})
}

// waitDrained blocks the reader goroutine until no response is queued, so the next request is
// handled after every earlier one has finished (the barrier before anything but Produce). It
// returns false when the connection closes meanwhile.
func (c *Conn) waitDrained() bool {
	return c.waitQueue(func() bool { return c.mu.queued == 0 })
}

// waitDrainedQueued is waitDrained for a request read and not yet handled: while it waits it
// counts in the plane's RequestQueueSize.
func (c *Conn) waitDrainedQueued() bool {
	if c.queueEmpty() {
		return true
	}
	c.plane.requestQueue.Add(1)
	defer c.plane.requestQueue.Add(-1)
	return c.waitDrained()
}

// waitQueue waits until ok (called with c.mu held) holds, woken by the writer after each
// finished response; false when the connection closes first.
func (c *Conn) waitQueue(ok func() bool) bool {
	for {
		c.mu.Lock()
		done := ok()
		c.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-c.drained:
		case <-c.ctx.Done():
			return false
		}
	}
}

// enqueue hands q to the writer goroutine, starting it on first use. It never blocks: out's
// capacity is MaxQueuedResponses and waitForRoom keeps the count below it.
func (c *Conn) enqueue(q *queued) {
	c.mu.Lock()
	c.mu.queued++
	c.mu.queuedBytes += len(q.req.Frame)
	c.mu.Unlock()
	c.plane.responseQueue.Add(1)
	if c.out == nil {
		c.out = make(chan *queued, c.srv.opts.MaxQueuedResponses)
		c.writerDone = make(chan struct{})
		go c.writeLoop()
	}
	c.out <- q
}

// stopWriter closes the queue and waits for the writer goroutine to finish it. Called by the
// reader goroutine when it stops reading.
func (c *Conn) stopWriter() {
	if c.out == nil {
		return
	}
	close(c.out)
	<-c.writerDone
}

// writeLoop is the connection's writer goroutine: it finishes queued responses strictly in
// order (waiting for a Pending, then writing), until the reader closes the queue. Once the
// connection is force-closed it drops what is left without calling Wait. Joined by the reader
// goroutine (stopWriter), so the Server's wg covers it.
func (c *Conn) writeLoop() {
	defer close(c.writerDone)
	var wbuf []byte
	for q := range c.out {
		c.finish(q, &wbuf)
	}
}

// finish completes one queued response; any failure closes the connection.
func (c *Conn) finish(q *queued, wbuf *[]byte) {
	defer c.dequeued(q)
	defer func() {
		if r := recover(); r != nil {
			c.panicked(r)
		}
	}()
	if c.ctx.Err() != nil {
		return // force-closed: drop
	}
	resp := q.resp
	if p, ok := resp.(Pending); ok {
		var err error
		if resp, err = p.Wait(c.ctx); err != nil {
			if c.ctx.Err() == nil {
				c.logRequest(q.req).WithError(err).Info("closing connection: handler error")
			}
			c.forceClose()
			return
		}
		if resp != nil && resp.Key() != q.req.Key {
			c.logRequest(q.req).Errorf("handler returned a response for api key %d; closing connection", resp.Key())
			c.forceClose()
			return
		}
	}
	var wstart time.Time
	if resp != nil {
		wstart = time.Now()
		if err := c.writeResponse(q.req, resp, wbuf); err != nil {
			c.logRequest(q.req).WithError(err).Debug("closing connection: writing response")
			c.forceClose()
			return
		}
	}
	c.srv.metrics.observe(q.req.Key, time.Since(q.start))
	c.networkTime(q.req, q.decode, wstart)
}

// dequeued releases q's slot: recycles its frame, wakes a reader waiting for room, and during
// graceful shutdown closes the connection once it waits for a request and owes nothing.
func (c *Conn) dequeued(q *queued) {
	c.recycle(q.req)
	c.mu.Lock()
	c.mu.queued--
	c.mu.queuedBytes -= len(q.req.Frame)
	if c.srv.closing.Load() {
		c.closeIfIdleLocked()
	}
	c.mu.Unlock()
	c.plane.responseQueue.Add(-1)
	select {
	case c.drained <- struct{}{}:
	default:
	}
}
