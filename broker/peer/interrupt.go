package peer

import (
	"context"
	"net"
	"sync"
	"time"
)

// interrupter unblocks the I/O of a Client's in-flight call when the call's ctx ends or the
// Client closes, by setting a past deadline on the call's connection. It is set up once per
// Client so that a call costs no allocation for a ctx that is never done and about two (those
// of context.AfterFunc) otherwise, instead of a channel and closures per call.
//
// Only one call is armed at a time (calls hold Client.mu). A ctx callback that has started is
// always waited for before the call returns (unwatch), so it can never hit the next call.
type interrupter struct {
	onDone func()        // immutable; the ctx callback, bound once
	fired  chan struct{} // immutable; buffer 1: onDone ran
	mu     sync.Mutex
	conn   net.Conn // guarded by mu; the armed call's connection, nil between calls
}

func (in *interrupter) init() {
	in.fired = make(chan struct{}, 1)
	in.onDone = func() {
		in.interrupt()
		in.fired <- struct{}{}
	}
}

// arm makes conn the connection interrupt acts on.
func (in *interrupter) arm(conn net.Conn) {
	in.mu.Lock()
	in.conn = conn
	in.mu.Unlock()
}

func (in *interrupter) disarm() {
	in.mu.Lock()
	in.conn = nil
	in.mu.Unlock()
}

// interrupt sets a past deadline on the armed connection, if any.
func (in *interrupter) interrupt() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.conn != nil {
		in.conn.SetDeadline(time.Unix(1, 0))
	}
}

// watch interrupts the armed call when ctx ends. It returns nil when ctx can never end;
// otherwise the caller passes the result to unwatch before the call returns.
func (in *interrupter) watch(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil {
		return nil
	}
	return context.AfterFunc(ctx, in.onDone)
}

// unwatch stops a watch and, if its callback already started, waits for it to finish.
func (in *interrupter) unwatch(stop func() bool) {
	if !stop() {
		<-in.fired
	}
}
