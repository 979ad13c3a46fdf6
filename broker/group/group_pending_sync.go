package group

import "sort"

// Pending syncs (KAFKA-12890, Kafka 2.8.1): once a join phase completes,
// every member owes a SyncGroup. Kafka's DelayedSync waits the group's
// rebalance timeout (the largest of its members'); the members that have
// not sent SyncGroup by then, static ones included, are removed and the
// group rebalances again, so one silent member can no longer hold the
// whole group in CompletingRebalance until its session expires. Their
// later SyncGroup and Heartbeat get UNKNOWN_MEMBER_ID. The timer keeps
// running in Stable: a follower that never syncs after the leader did is
// removed the same way.
//
// The bookkeeping follows GroupMetadata.pendingSyncMembers: filled at
// onCompleteJoin, emptied member by member by SyncGroup (the leader's
// counts), by member removal, and cleared by prepareRebalance and when
// the group is unloaded. Replacing a static member (replaceStaticMember)
// does not carry its pending sync over to the new member id, as in Kafka:
// the old id then expires and the group rebalances.

// schedulePendingSync is Kafka's addPendingSyncMember for every member
// plus schedulePendingSync, called once the join completed.
func (g *group) schedulePendingSync() {
	g.cancelSyncTimer()
	for id := range g.members {
		g.pendingSync[id] = true
	}
	gen := g.generation
	token := g.syncToken
	timeout := g.rebalanceTimeout()
	g.syncTimer = g.after(timeout, func() {
		if g.syncToken == token {
			g.onExpirePendingSync(gen)
		}
	})
}

// removePendingSync: Kafka's removePendingSyncMember; the DelayedSync
// completes (the timer stops) once nobody owes a sync.
func (g *group) removePendingSync(id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 {
		g.cancelSyncTimer()
	}
}

// removeSyncExpiration: Kafka's removeSyncExpiration.
func (g *group) removeSyncExpiration() {
	clear(g.pendingSync)
	g.cancelSyncTimer()
}

// cancelSyncTimer stops the DelayedSync; a firing already queued is
// ignored through the token.
func (g *group) cancelSyncTimer() {
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
	g.syncToken++
}

// onExpirePendingSync: Kafka's onExpirePendingSync.
func (g *group) onExpirePendingSync(gen int32) {
	g.syncTimer = nil
	if gen != g.generation || !(g.is(CompletingRebalance) || g.is(Stable)) || len(g.pendingSync) == 0 {
		return
	}
	ids := make([]string, 0, len(g.pendingSync))
	for id := range g.pendingSync {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var first *member
	for _, id := range ids {
		m := g.members[id]
		if m == nil {
			continue // a replaced static member's old id (see above)
		}
		if first == nil {
			c := *m
			first = &c
		}
		g.log.WithFields(map[string]any{"member": id, "client_id": m.clientID, "client_host": m.clientHost,
			"group_instance_id": m.instanceID, "rebalance_timeout": g.rebalanceTimeout(), "generation": g.generation}).
			Info("group: member did not send SyncGroup within the rebalance timeout; removing it from the group")
		g.removeMember(id)
		g.noteMemberEvent(m, ReasonPendingSyncExpired)
	}
	r := newReason(ReasonPendingSyncExpired, first, "Removing "+bracketList(ids)+" on pending sync request expiration")
	g.prepareRebalance(r)
}

// bracketList formats ids as Scala prints a Set: Set(a, b).
func bracketList(ids []string) string {
	s := "Set("
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s + ")"
}
