package group

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// newMemberID returns clientID + "-" + a random UUID-shaped suffix, as
// Kafka's GroupMetadata.generateMemberId.
func newMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return clientID + "-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// handleJoin is JoinGroup on the group goroutine (Kafka's
// GroupCoordinator.handleJoinGroup after validation). reply gets exactly
// one answer, now or when the rebalance completes.
func (g *group) handleJoin(req JoinRequest, reply chan<- JoinResult) {
	if g.is(Dead) {
		reply <- joinError(req.MemberID, kerr.CoordinatorNotAvailable.Code)
		return
	}
	if !g.supportsProtocols(req.ProtocolType, req.Protocols) {
		reply <- joinError(req.MemberID, kerr.InconsistentGroupProtocol.Code)
		return
	}
	if !g.acceptJoiningMember(req.MemberID) {
		if m := g.members[req.MemberID]; m != nil {
			g.removeMemberAndUpdate(m, newReason(ReasonOther, m, "Removing member "+m.id+": the group is full (group.max.size)"))
		}
		reply <- joinError("", kerr.GroupMaxSizeReached.Code)
		return
	}
	if req.MemberID == "" {
		g.joinUnknown(req, reply)
	} else {
		g.joinKnown(req, reply)
	}
	if g.is(PreparingRebalance) {
		g.tryCompleteJoin()
	}
}

// acceptJoiningMember: Kafka's acceptJoiningMember (group.max.size). While
// preparing, the members already awaiting count, so the last rejoiners of
// a group above a lowered limit are the ones refused.
func (g *group) acceptJoiningMember(id string) bool {
	m := g.members[id]
	switch g.state {
	case PreparingRebalance:
		return (m != nil && m.joinReply != nil) || int32(g.numAwaiting) < g.c.cfg.MaxSize
	case CompletingRebalance, Stable:
		return m != nil || int32(len(g.members)) < g.c.cfg.MaxSize
	default:
		return true
	}
}

func (g *group) isPendingMember(id string) bool {
	_, ok := g.pending[id]
	return ok && id != ""
}

// joinUnknown: Kafka's doUnknownJoinGroup.
func (g *group) joinUnknown(req JoinRequest, reply chan<- JoinResult) {
	id := newMemberID(req.ClientID)
	switch {
	case req.GroupInstanceID != "":
		if old, ok := g.static[req.GroupInstanceID]; ok {
			g.replaceStaticMember(old, id, req, reply)
		} else {
			g.addMemberAndRebalance(id, req, reply)
		}
	case req.RequireKnownMember:
		// KIP-394: hand out the id first; the member must come back with it
		// within the session timeout.
		g.pending[id] = g.after(req.sessionTimeout(), func() { g.expirePending(id) })
		reply <- joinError(id, kerr.MemberIDRequired.Code)
	default:
		g.addMemberAndRebalance(id, req, reply)
	}
}

// joinKnown: Kafka's doJoinGroup for a member that sent its id.
func (g *group) joinKnown(req JoinRequest, reply chan<- JoinResult) {
	id := req.MemberID
	if t, ok := g.pending[id]; ok {
		if req.GroupInstanceID != "" {
			// Static members never get pending ids; a broken client.
			reply <- joinError(id, kerr.UnknownMemberID.Code)
			return
		}
		t.Stop()
		delete(g.pending, id)
		g.addMemberAndRebalance(id, req, reply)
		return
	}
	if g.isStaticMemberFenced(id, req.GroupInstanceID) {
		reply <- joinError(id, kerr.FencedInstanceID.Code)
		return
	}
	m, ok := g.members[id]
	if !ok || (req.GroupInstanceID != "" && g.static[req.GroupInstanceID] != id) {
		reply <- joinError(id, kerr.UnknownMemberID.Code)
		return
	}
	switch g.state {
	case PreparingRebalance:
		g.updateMemberAndRebalance(m, req, reply, ReasonMemberJoined, "Member "+id+" joining group during PreparingRebalance")
	case CompletingRebalance:
		if m.matches(req.Protocols) {
			reply <- g.currentJoinResult(m)
		} else {
			g.updateMemberAndRebalance(m, req, reply, ReasonMetadataChanged, "Updating metadata for member "+id+" during CompletingRebalance")
		}
	case Stable:
		switch {
		case g.leader == id:
			// How consumers signal topic metadata changes (new partitions,
			// regex matches) that leave their own metadata unchanged.
			g.updateMemberAndRebalance(m, req, reply, ReasonMetadataChanged, "Leader "+id+" re-joining group during Stable")
		case !m.matches(req.Protocols):
			g.updateMemberAndRebalance(m, req, reply, ReasonMetadataChanged, "Updating metadata for member "+id+" during Stable")
		default:
			reply <- g.currentJoinResult(m)
		}
	default:
		reply <- joinError(id, kerr.UnknownMemberID.Code)
	}
}

// currentJoinResult answers a member with the current generation; only
// the leader gets the member list.
func (g *group) currentJoinResult(m *member) JoinResult {
	res := JoinResult{
		Generation:   g.generation,
		ProtocolType: g.protocolType,
		Protocol:     g.protocol,
		LeaderID:     g.leader,
		MemberID:     m.id,
	}
	if g.leader == m.id {
		res.Members = g.joinMembers()
	}
	return res
}

// joinMembers lists members with their metadata for the chosen protocol.
func (g *group) joinMembers() []JoinMember {
	out := make([]JoinMember, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		out = append(out, JoinMember{MemberID: id, GroupInstanceID: m.instanceID, Metadata: m.metadata(g.protocol)})
	}
	return out
}

func (r *JoinRequest) sessionTimeout() time.Duration {
	return time.Duration(r.SessionTimeoutMs) * time.Millisecond
}

// addMemberAndRebalance: Kafka's addMemberAndRebalance.
func (g *group) addMemberAndRebalance(id string, req JoinRequest, reply chan<- JoinResult) {
	m := &member{
		id:               id,
		instanceID:       req.GroupInstanceID,
		clientID:         req.ClientID,
		clientHost:       req.ClientHost,
		sessionTimeout:   req.sessionTimeout(),
		rebalanceTimeout: time.Duration(req.RebalanceTimeoutMs) * time.Millisecond,
		protocolType:     req.ProtocolType,
		protocols:        req.Protocols,
		isNew:            true,
	}
	if g.is(PreparingRebalance) && g.generation == 0 {
		g.newAdded = true
	}
	g.addMember(m, reply)
	// A new member cannot heartbeat before its JoinGroup answer, and its
	// socket may be gone; expire it if the rebalance outlasts 5 minutes.
	g.scheduleHeartbeat(m, g.c.cfg.NewMemberJoinTimeout)
	if !g.canRebalance() {
		return
	}
	text := "Adding new member " + id + " with group instance id " + instanceOpt(req.GroupInstanceID)
	kind := ReasonMemberJoined
	if g.takePollExpired(m.clientID, m.clientHost) {
		// The same client was dropped from the last join for not rejoining
		// within the rebalance timeout: this rejoin is its consequence.
		kind = ReasonMaxPollExpired
		text += "; the client's previous member was removed after exceeding the rebalance timeout (max.poll.interval.ms) while still heartbeating"
	}
	g.prepareRebalance(newReason(kind, m, text))
}

// updateMemberAndRebalance: Kafka's updateMemberAndRebalance.
func (g *group) updateMemberAndRebalance(m *member, req JoinRequest, reply chan<- JoinResult, kind ReasonKind, text string) {
	g.updateMember(m, req, reply)
	g.maybePrepareRebalance(newReason(kind, m, text))
}

// updateMember records new protocols and the pending join answer.
func (g *group) updateMember(m *member, req JoinRequest, reply chan<- JoinResult) {
	m.protocols = req.Protocols
	m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMs) * time.Millisecond
	m.sessionTimeout = req.sessionTimeout()
	if m.joinReply != nil {
		// A duplicate JoinGroup replaces the older call, which Kafka
		// answers with nothing; answer it so its handler returns.
		m.joinReply <- joinError(m.id, kerr.RebalanceInProgress.Code)
		g.numAwaiting--
	}
	m.joinReply = reply
	if reply != nil {
		g.numAwaiting++
	}
}

// replaceStaticMember: Kafka's updateStaticMemberAndRebalance (KIP-345):
// a static member rejoining with a new member id replaces the old one.
func (g *group) replaceStaticMember(oldID, newID string, req JoinRequest, reply chan<- JoinResult) {
	m := g.members[oldID]
	prevLeader := g.leader
	// Answer the replaced id's pending calls: it is fenced from now on.
	g.invokeJoin(m, joinError(oldID, kerr.FencedInstanceID.Code))
	g.invokeSync(m, SyncResult{ErrorCode: kerr.FencedInstanceID.Code})
	g.renameMember(m, newID)
	g.scheduleHeartbeat(m, 0)
	oldProtocols := m.protocols
	g.updateMember(m, req, reply)
	switch g.state {
	case Stable:
		// Kafka: if the selected protocol would not change, persist the new
		// member id and answer without a rebalance; the old leader id is
		// returned so the member does not re-assign.
		if g.selectProtocol() == g.protocol {
			g.numAwaiting--
			m.joinReply = nil
			gen := g.generation
			g.storeGroup(nil, func(code int16) {
				if code != 0 {
					// Revert as Kafka does: the old id is the member again.
					m.protocols = oldProtocols
					if g.members[newID] == m {
						g.renameMember(m, oldID)
					}
					reply <- joinError("", code)
					return
				}
				reply <- JoinResult{Generation: gen, ProtocolType: g.protocolType, Protocol: g.protocol,
					LeaderID: prevLeader, MemberID: newID}
			}, func(code int16) { reply <- joinError("", code) })
			return
		}
		g.maybePrepareRebalance(newReason(ReasonStaticReplaced, m, "Group's selectedProtocol will change because static member "+
			newID+" with instance id "+req.GroupInstanceID+" joined with change of protocol"))
	case CompletingRebalance:
		// The leader may already assign to the old member id.
		g.prepareRebalance(newReason(ReasonStaticReplaced, m, "Updating metadata for static member "+newID+
			" with instance id "+req.GroupInstanceID))
	}
}

// renameMember gives static member m the id to (Kafka's
// replaceGroupInstance), keeping its place, leadership and instance id.
func (g *group) renameMember(m *member, to string) {
	from := m.id
	delete(g.members, from)
	m.id = to
	g.members[to] = m
	for i, x := range g.order {
		if x == from {
			g.order[i] = to
		}
	}
	if m.instanceID != "" {
		g.static[m.instanceID] = to
	}
	if g.leader == from {
		g.leader = to
	}
}

// expirePending drops a KIP-394 pending member that never came back.
func (g *group) expirePending(id string) {
	if _, ok := g.pending[id]; !ok {
		return
	}
	delete(g.pending, id)
	g.log.WithFields(map[string]any{"member": id, "reason": "pending member did not join within the session timeout"}).
		Info("group: pending member removed after session timeout")
	if g.is(PreparingRebalance) {
		g.tryCompleteJoin()
	}
}

// maybePrepareRebalance starts a rebalance if the state allows one.
func (g *group) maybePrepareRebalance(reason Rebalance) {
	if g.canRebalance() {
		g.prepareRebalance(reason)
	}
}

// prepareRebalance: Kafka's prepareRebalance. An Empty group waits
// group.initial.rebalance.delay.ms for more members (InitialDelayedJoin);
// otherwise the join completes when every member rejoined or the
// rebalance timeout passed (DelayedJoin).
func (g *group) prepareRebalance(reason Rebalance) {
	if g.is(CompletingRebalance) {
		g.resetAndPropagateAssignmentError(kerr.RebalanceInProgress.Code)
	}
	g.removeSyncExpiration()
	g.cancelJoinTimer()
	wasEmpty := g.is(Empty)
	g.transition(PreparingRebalance)
	g.recordRebalance(reason)
	if wasEmpty {
		delay := g.c.cfg.InitialRebalanceDelay
		g.joinRemaining = max(g.rebalanceTimeout()-delay, 0)
		g.armJoin(joinInitial, delay)
		return
	}
	g.armJoin(joinNormal, g.rebalanceTimeout())
	g.tryCompleteJoin()
}

// armJoin starts the delayed join of kind after d.
func (g *group) armJoin(kind joinKind, d time.Duration) {
	g.cancelJoinTimer()
	g.join = kind
	token := g.joinToken
	g.joinTimer = g.after(d, func() {
		if g.joinToken == token {
			g.onJoinTimer(kind, d)
		}
	})
}

// onJoinTimer: the delayed join expired.
func (g *group) onJoinTimer(kind joinKind, d time.Duration) {
	g.joinTimer = nil
	if kind == joinInitial && g.newAdded && g.joinRemaining > 0 {
		// Kafka's InitialDelayedJoin.onComplete: a member joined during the
		// delay, so wait again, within the rebalance timeout's budget.
		g.newAdded = false
		next := min(g.c.cfg.InitialRebalanceDelay, g.joinRemaining)
		g.joinRemaining = max(g.joinRemaining-next, 0)
		g.armJoin(joinInitial, next)
		return
	}
	g.join = joinNone
	g.completeJoin()
}

// tryCompleteJoin completes a DelayedJoin once every member has rejoined.
func (g *group) tryCompleteJoin() {
	if g.is(PreparingRebalance) && g.join == joinNormal && g.hasAllMembersJoined() {
		g.cancelJoinTimer()
		g.completeJoin()
	}
}

// completeJoin: Kafka's onCompleteJoin.
func (g *group) completeJoin() {
	if !g.is(PreparingRebalance) {
		return
	}
	// Dynamic members that did not rejoin within the rebalance timeout are
	// removed; static members stay until their session times out.
	for _, id := range append([]string(nil), g.order...) {
		m := g.members[id]
		if m.joinReply == nil && m.instanceID == "" {
			// Its session is alive (else it would have expired first): it
			// heartbeats but did not rejoin in time, what Java consumers
			// call exceeding max.poll.interval.ms.
			g.log.WithFields(map[string]any{"member": id, "client_id": m.clientID, "client_host": m.clientHost,
				"rebalance_timeout": g.rebalanceTimeout(), "reason_kind": string(ReasonMaxPollExpired),
				"reason": "did not rejoin within the rebalance timeout"}).
				Info("group: member did not rejoin within the rebalance timeout; removing it from the group")
			g.removeMember(id)
			g.noteMemberEvent(m, ReasonMaxPollExpired)
		}
	}
	if !g.electJoinedLeader() && len(g.members) > 0 {
		g.log.Warn("group: could not complete rebalance because no members rejoined")
		g.armJoin(joinNormal, g.rebalanceTimeout())
		return
	}
	g.initNextGeneration()
	if g.is(Empty) {
		g.log.WithField("generation", g.generation).Info("group: group is now empty")
		g.storeGroup(nil, func(code int16) {
			if code != 0 {
				g.log.WithField("error", code).Warn("group: failed to write empty group metadata")
			}
		}, func(int16) {})
		return
	}
	g.log.WithFields(map[string]any{"generation": g.generation, "members": len(g.members), "protocol": g.protocol}).
		Info("group: stabilized group")
	for _, id := range g.order {
		m := g.members[id]
		g.invokeJoin(m, g.currentJoinResult(m))
		g.scheduleHeartbeat(m, 0)
		m.isNew = false
	}
	g.schedulePendingSync()
}

// electJoinedLeader: Kafka's maybeElectNewJoinedLeader. If the leader did
// not rejoin, any rejoined member leads.
func (g *group) electJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if l := g.members[g.leader]; l != nil && l.joinReply != nil {
		return true
	}
	for _, id := range g.order {
		if g.members[id].joinReply != nil {
			g.log.WithFields(map[string]any{"old_leader": g.leader, "new_leader": id}).Info("group: leader did not rejoin; electing a rejoined member")
			g.leader = id
			return true
		}
	}
	return false
}

// initNextGeneration: Kafka's initNextGeneration.
func (g *group) initNextGeneration() {
	g.generation++
	if len(g.members) > 0 {
		g.protocol = g.selectProtocol()
		g.computeSubscriptions()
		g.transition(CompletingRebalance)
		return
	}
	g.protocol = ""
	g.leader = ""
	g.subscribed, g.subsKnown = nil, false
	g.transition(Empty)
}

// removeMemberAndUpdate: Kafka's removeMemberAndUpdateGroup.
func (g *group) removeMemberAndUpdate(m *member, reason Rebalance) {
	// A new member may still await its JoinGroup answer.
	g.invokeJoin(m, joinError("", kerr.UnknownMemberID.Code))
	g.invokeSync(m, SyncResult{ErrorCode: kerr.UnknownMemberID.Code})
	g.removeMember(m.id)
	switch g.state {
	case Stable, CompletingRebalance:
		g.maybePrepareRebalance(reason)
	case PreparingRebalance:
		g.tryCompleteJoin()
	}
}
