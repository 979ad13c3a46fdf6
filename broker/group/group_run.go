package group

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// run is the group's goroutine: it owns every unexported field of g and
// serves requests, timer and append events until stop. Control events go
// first so a timer is never starved by a flood of requests. After every
// event, whichever select served it, a Dead group with nothing left to
// write exits: its last append's completion is a control event, and
// nothing else may ever arrive to wake it.
func (g *group) run() {
	defer close(g.done)
	for {
		select {
		case f := <-g.controlCh:
			f()
		default:
			select {
			case f := <-g.controlCh:
				f()
			case f := <-g.reqCh:
				f()
			case <-g.quit:
				g.shutdown()
				return
			}
		}
		g.publishCounts()
		if invariantsEnabled {
			g.checkInvariants()
		}
		if g.is(Dead) && !g.appending && len(g.appendQ) == 0 {
			// Deleted or expired: leave once its tombstones are written.
			g.shutdown()
			return
		}
	}
}

// stop asks the group goroutine to exit, answering what waits with code
// (NOT_COORDINATOR when the partition moved). It does not wait.
func (g *group) stop(code int16) {
	if g.stopOnce.CompareAndSwap(false, true) {
		g.exitCode.Store(int32(code))
		close(g.quit)
	}
}

// shutdown runs on the group goroutine when it exits: pending JoinGroup
// and SyncGroup calls are answered (Kafka's onGroupUnloaded answers
// NOT_COORDINATOR), timers stop and queued appends are abandoned.
func (g *group) shutdown() {
	code := int16(g.exitCode.Load())
	if code == 0 {
		code = kerr.CoordinatorNotAvailable.Code
		g.exitCode.Store(int32(code))
	}
	if g.state != Dead {
		g.state = Dead
		g.publish()
	}
	for _, m := range g.members {
		g.invokeJoin(m, joinError(m.id, code))
		g.invokeSync(m, SyncResult{ErrorCode: code})
		g.stopHeartbeat(m)
	}
	for id, t := range g.pending {
		t.Stop()
		delete(g.pending, id)
	}
	g.cancelJoinTimer()
	g.removeSyncExpiration()
	for _, op := range g.appendQ {
		op.abort(code)
	}
	g.appendQ = nil
	g.cancel()
	g.c.groupExited(g)
	if g.c.onGroupGone != nil && g.rebalSnap.Load() != nil {
		g.c.onGroupGone(g.id)
	}
}

// post hands f to the group goroutine from a timer or append goroutine;
// it gives up when the group has stopped.
func (g *group) post(f func()) {
	select {
	case g.controlCh <- f:
	case <-g.done:
	}
}

// after runs f on the group goroutine after d.
func (g *group) after(d time.Duration, f func()) Timer {
	return g.c.clock.AfterFunc(d, func() { g.post(f) })
}

// call sends fn to g's goroutine and waits for the value it replies with.
// fail builds the answer when the group stops first (its exit code) or ctx
// ends.
func call[T any](ctx context.Context, g *group, fail func(code int16) T, fn func(reply chan<- T)) T {
	reply := make(chan T, 1)
	select {
	case g.reqCh <- func() { fn(reply) }:
		g.c.queued.Add(1)
	case <-g.done:
		return fail(int16(g.exitCode.Load()))
	case <-ctx.Done():
		return fail(kerr.RequestTimedOut.Code)
	}
	select {
	case r := <-reply:
		return r
	case <-g.done:
		select {
		case r := <-reply:
			return r
		default:
			return fail(int16(g.exitCode.Load()))
		}
	case <-ctx.Done():
		return fail(kerr.RequestTimedOut.Code)
	}
}

// scheduleHeartbeat (re)arms m's expiry after its session timeout, or
// after timeout when positive (new members): Kafka's
// completeAndScheduleNextExpiration.
func (g *group) scheduleHeartbeat(m *member, timeout time.Duration) {
	g.stopHeartbeat(m)
	if timeout <= 0 {
		timeout = m.sessionTimeout
	}
	g.hbTokenNext++
	token := g.hbTokenNext
	m.hbToken = token
	m.hbTimer = g.after(timeout, func() { g.onHeartbeatExpired(m, token, timeout) })
}

// stopHeartbeat cancels m's expiry.
func (g *group) stopHeartbeat(m *member) {
	if m.hbTimer != nil {
		m.hbTimer.Stop()
		m.hbTimer = nil
	}
	m.hbToken = 0
}

// onHeartbeatExpired removes a member that missed its session timeout
// (Kafka's onExpireHeartbeat). Members awaiting a JoinGroup or SyncGroup
// answer count as alive unless they are new.
func (g *group) onHeartbeatExpired(m *member, token uint64, timeout time.Duration) {
	if g.members[m.id] != m || m.hbToken != token || g.is(Dead) {
		return
	}
	id := m.id
	m.hbTimer = nil
	if !m.isNew && (m.joinReply != nil || m.syncReply != nil) {
		return
	}
	reason := "session timeout"
	if m.isNew {
		reason = "new member join timeout"
	}
	g.log.WithFields(map[string]any{"member": id, "timeout": timeout, "reason": reason}).
		Info("group: member failed to heartbeat within its timeout; removing it from the group")
	g.noteMemberEvent(m, ReasonSessionExpired)
	g.removeMemberAndUpdate(m, newReason(ReasonSessionExpired, m, "removing member "+id+" on heartbeat expiration"))
}

// cancelJoinTimer stops the delayed join.
func (g *group) cancelJoinTimer() {
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	g.joinToken++
	g.join = joinNone
}
