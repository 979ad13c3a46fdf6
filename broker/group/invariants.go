package group

import "fmt"

// checkInvariants panics if the group's bookkeeping is inconsistent. It
// runs on the group goroutine after every event when invariantsEnabled.
func (g *group) checkInvariants() {
	fail := func(format string, args ...any) {
		panic(fmt.Sprintf("group %q: invariant broken: "+format, append([]any{g.id}, args...)...))
	}
	if len(g.order) != len(g.members) {
		fail("order lists %d members, map has %d", len(g.order), len(g.members))
	}
	awaiting := 0
	for _, id := range g.order {
		m := g.members[id]
		if m == nil || m.id != id {
			fail("order names %q, not a member under that id", id)
		}
		if m.joinReply != nil {
			awaiting++
		}
		if m.instanceID != "" && g.static[m.instanceID] != id {
			fail("static member %q maps to %q", id, g.static[m.instanceID])
		}
	}
	if awaiting != g.numAwaiting {
		fail("numAwaiting %d, members awaiting %d", g.numAwaiting, awaiting)
	}
	for inst, id := range g.static {
		if m := g.members[id]; m == nil || m.instanceID != inst {
			fail("instance %q maps to %q, which is not its member", inst, id)
		}
	}
	if (g.leader == "") != (len(g.members) == 0) && g.state != Dead {
		fail("leader %q with %d members", g.leader, len(g.members))
	}
	if g.leader != "" && g.members[g.leader] == nil && g.state != Dead {
		fail("leader %q is not a member", g.leader)
	}
	switch g.state {
	case Empty:
		if len(g.members) > 0 {
			fail("Empty with %d members", len(g.members))
		}
	case CompletingRebalance, Stable:
		if len(g.members) == 0 {
			fail("%s without members", g.state)
		}
		if awaiting > 0 {
			fail("%s with %d members awaiting a join answer", g.state, awaiting)
		}
	}
	if len(g.pendingSync) > 0 && g.state != CompletingRebalance && g.state != Stable {
		fail("%d members owe a SyncGroup in %s", len(g.pendingSync), g.state)
	}
	if (len(g.pendingSync) > 0) != (g.syncTimer != nil) && g.state != Dead {
		fail("%d pending syncs but sync timer armed=%v", len(g.pendingSync), g.syncTimer != nil)
	}
	if g.state != PreparingRebalance && g.join != joinNone {
		fail("delayed join armed in %s", g.state)
	}
}
