package peer

import (
	"context"
	"net"
	"sync"
	"time"
)

// interrupter unblocks the I/O of a Client's in-flight call when the call's ctx ends or the
// Client closes, by setting a past deadline on the call's connection.
//
// The watch (context.AfterFunc) of a ctx without a deadline is kept from call to call while
// callers pass the same ctx (one with the same Done channel, which ends at the same moment),
// as a replica fetcher does with its lifetime ctx, so such calls cost no allocation; a call
// with another ctx replaces it, a ctx with a deadline is taken for a per-call one and released
// when its call ends, and Close releases any (a Client dropped without Close keeps its last
// watch registered with that ctx until the ctx ends). Calls hold Client.mu, so one call at a
// time is armed and the watch fields are only touched under Client.mu. A watch's callback
// interrupts the armed call only if that call's ctx is done, so a ctx that ends between calls,
// or the previous caller's ctx, can never interrupt a later call; calls re-check their ctx
// after arming (see arm).
type interrupter struct {
	onDone func()        // immutable; the ctx callback, bound once
	fired  chan struct{} // immutable; buffer 1: onDone ran for the current watch

	watched <-chan struct{} // guarded by Client.mu; the Done channel of the live watch's ctx
	stop    func() bool     // guarded by Client.mu; stops the live watch; nil if none

	mu      sync.Mutex
	conn    net.Conn        // guarded by mu; the armed call's connection, nil between calls
	connCtx context.Context // guarded by mu; the armed call's ctx
}

func (in *interrupter) init() {
	in.fired = make(chan struct{}, 1)
	in.onDone = func() {
		in.mu.Lock()
		if in.conn != nil && in.connCtx.Err() != nil {
			in.conn.SetDeadline(time.Unix(1, 0))
		}
		in.mu.Unlock()
		in.fired <- struct{}{}
	}
}

// arm makes conn, used by a call with ctx, the connection interrupt acts on, and watches ctx.
// The caller then checks ctx.Err() and its close state: an end that came before arm is seen
// there, one after it interrupts conn.
func (in *interrupter) arm(ctx context.Context, conn net.Conn) {
	in.mu.Lock()
	in.conn, in.connCtx = conn, ctx
	in.mu.Unlock()
	done := ctx.Done()
	if done == nil || done == in.watched {
		return
	}
	in.release()
	in.watched, in.stop = done, context.AfterFunc(ctx, in.onDone)
}

// disarm ends the call made with ctx: interrupt no longer acts on its connection. A ctx with
// a deadline is taken for a per-call ctx, which ends soon after the call: its watch is
// released now, so that its end does not start a callback goroutine for nothing.
func (in *interrupter) disarm(ctx context.Context) {
	in.mu.Lock()
	in.conn, in.connCtx = nil, nil
	in.mu.Unlock()
	if _, ok := ctx.Deadline(); ok {
		in.release()
	}
}

// interrupt sets a past deadline on the armed connection, if any (Client.Close).
func (in *interrupter) interrupt() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.conn != nil {
		in.conn.SetDeadline(time.Unix(1, 0))
	}
}

// release stops the live watch, if any; if its callback already started it waits for it, so
// no callback of it runs afterwards.
func (in *interrupter) release() {
	if in.stop == nil {
		return
	}
	if !in.stop() {
		<-in.fired
	}
	in.watched, in.stop = nil, nil
}
