package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// handleSync is SyncGroup on the group goroutine (Kafka's doSyncGroup).
func (g *group) handleSync(req SyncRequest, reply chan<- SyncResult) {
	fail := func(code int16) { reply <- SyncResult{ErrorCode: code} }
	m, ok := g.members[req.MemberID]
	switch {
	case g.is(Dead):
		fail(kerr.CoordinatorNotAvailable.Code)
	case g.isStaticMemberFenced(req.MemberID, req.GroupInstanceID):
		fail(kerr.FencedInstanceID.Code)
	case !ok:
		fail(kerr.UnknownMemberID.Code)
	case req.Generation != g.generation:
		fail(kerr.IllegalGeneration.Code)
	case req.ProtocolType != "" && req.ProtocolType != g.protocolType,
		req.Protocol != "" && req.Protocol != g.protocol:
		fail(kerr.InconsistentGroupProtocol.Code)
	case g.is(Empty):
		fail(kerr.UnknownMemberID.Code)
	case g.is(PreparingRebalance):
		fail(kerr.RebalanceInProgress.Code)
	case g.is(Stable):
		g.removePendingSync(m.id)
		reply <- SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment}
		g.scheduleHeartbeat(m, 0)
	default: // CompletingRebalance
		if m.syncReply != nil {
			m.syncReply <- SyncResult{ErrorCode: kerr.RebalanceInProgress.Code}
		}
		m.syncReply = reply
		g.removePendingSync(m.id)
		if g.leader == req.MemberID {
			g.completeSync(req)
		}
	}
}

// completeSync stores the leader's assignment and, once written, answers
// every member and moves to Stable (Kafka's doSyncGroup leader branch).
func (g *group) completeSync(req SyncRequest) {
	g.log.WithField("generation", g.generation).Info("group: assignment received from leader")
	assignment := make(map[string][]byte, len(g.members))
	missing := 0
	for id := range g.members {
		a, ok := req.Assignments[id]
		if !ok {
			missing++
			a = []byte{}
		}
		assignment[id] = a
	}
	if missing > 0 {
		g.log.WithField("missing", missing).Warn("group: leader's assignment misses members; they get an empty assignment")
	}
	gen := g.generation
	g.storeGroup(assignment, func(code int16) {
		// Another member may have joined while the write was in flight.
		if !g.is(CompletingRebalance) || g.generation != gen {
			return
		}
		if code != 0 {
			g.resetAndPropagateAssignmentError(code)
			g.maybePrepareRebalance(otherReason("Error " + kerr.ErrorForCode(code).Error() + " when storing group assignment during SyncGroup (member: " + req.MemberID + ")"))
			return
		}
		for id, m := range g.members {
			m.assignment = assignment[id]
		}
		g.transition(Stable)
		for _, id := range g.order {
			m := g.members[id]
			g.invokeSync(m, SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment})
			g.scheduleHeartbeat(m, 0)
		}
	}, func(int16) {})
}

// resetAndPropagateAssignmentError clears assignments and fails every
// pending SyncGroup with code.
func (g *group) resetAndPropagateAssignmentError(code int16) {
	for _, m := range g.members {
		m.assignment = nil
		g.invokeSync(m, SyncResult{ErrorCode: code})
	}
}

// handleHeartbeat is Heartbeat on the group goroutine.
func (g *group) handleHeartbeat(req HeartbeatRequest) int16 {
	if g.isStaticMemberFenced(req.MemberID, req.GroupInstanceID) {
		return kerr.FencedInstanceID.Code
	}
	switch g.state {
	case Dead:
		return kerr.CoordinatorNotAvailable.Code
	case Empty:
		return kerr.UnknownMemberID.Code
	}
	m, ok := g.members[req.MemberID]
	if !ok {
		return kerr.UnknownMemberID.Code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	g.scheduleHeartbeat(m, 0)
	if g.is(PreparingRebalance) {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// handleLeave is LeaveGroup on the group goroutine; it returns one code
// per member (Kafka's handleLeaveGroup).
func (g *group) handleLeave(members []LeaveMember) (int16, []int16) {
	if g.is(Dead) {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	codes := make([]int16, len(members))
	for i, lm := range members {
		id := lm.MemberID
		switch {
		case id == "":
			// KIP-345 admin removal by instance id.
			cur, ok := g.static[lm.GroupInstanceID]
			if lm.GroupInstanceID == "" || !ok {
				codes[i] = kerr.UnknownMemberID.Code
				continue
			}
			g.leave(g.members[cur], "removed by group.instance.id "+lm.GroupInstanceID+" through LeaveGroup (KIP-345)", lm.Reason)
		case g.isPendingMember(id):
			g.pending[id].Stop()
			delete(g.pending, id)
			g.log.WithFields(map[string]any{"member": id, "reason": reasonLeaveGroup}).
				Info("group: pending member left through LeaveGroup")
			if g.is(PreparingRebalance) {
				g.tryCompleteJoin()
			}
		case g.isStaticMemberFenced(id, lm.GroupInstanceID):
			codes[i] = kerr.FencedInstanceID.Code
		case g.members[id] != nil:
			g.leave(g.members[id], reasonLeaveGroup, lm.Reason)
		default:
			codes[i] = kerr.UnknownMemberID.Code
		}
	}
	return 0, codes
}

// reasonLeaveGroup is the reason logged when a member leaves on its own
// LeaveGroup request (Kafka 2.8's LeaveGroup carries no client reason;
// KIP-800 added one in 3.2).
const reasonLeaveGroup = "the member sent LeaveGroup"

// leave removes m through LeaveGroup; reason says who asked, client is
// the reason the client sent (LeaveGroup v5, KIP-800; "" before).
func (g *group) leave(m *member, reason, client string) {
	g.log.WithFields(map[string]any{"member": m.id, "reason": reason, "client_reason": client}).
		Info("group: member left the group through LeaveGroup")
	text := "Removing member " + m.id + " on LeaveGroup"
	if client != "" {
		text += "; client reason: " + client
	}
	g.removeMemberAndUpdate(m, newReason(ReasonMemberLeft, m, text))
}

// storeGroup writes the group's metadata (with assignment, or each
// member's current assignment when nil) to the offsets partition; done
// runs on the group goroutine with the Kafka code, abort anywhere if the
// group stopped first.
func (g *group) storeGroup(assignment map[string][]byte, done func(code int16), abort func(code int16)) {
	v := GroupValue{
		ProtocolType:          g.protocolType,
		Generation:            g.generation,
		Protocol:              g.protocol,
		Leader:                g.leader,
		CurrentStateTimestamp: g.stateTime.UnixMilli(),
	}
	for _, id := range g.order {
		m := g.members[id]
		a := m.assignment
		if assignment != nil {
			a = assignment[id]
		}
		v.Members = append(v.Members, MemberValue{
			MemberID:           id,
			GroupInstanceID:    m.instanceID,
			ClientID:           m.clientID,
			ClientHost:         m.clientHost,
			RebalanceTimeoutMs: int32(m.rebalanceTimeout.Milliseconds()),
			SessionTimeoutMs:   int32(m.sessionTimeout.Milliseconds()),
			Subscription:       m.metadata(g.protocol),
			Assignment:         a,
		})
	}
	batch, err := g.c.buildBatch([]kv{{key: EncodeGroupKey(g.id), value: EncodeGroupValue(v)}})
	if err != nil {
		g.log.WithError(err).Warn("group: cannot encode group metadata")
		done(kerr.UnknownServerError.Code)
		return
	}
	g.enqueueAppend(&appendOp{
		batch: batch,
		done:  func(err error) { done(storeGroupErrorCode(err)) },
		abort: abort,
	})
}

// computeSubscriptions records the topics consumer-protocol members
// subscribe to (Kafka's computeSubscribedTopics); OffsetDelete and offset
// expiry consult them.
func (g *group) computeSubscriptions() {
	g.subscribed, g.subsKnown = nil, false
	if g.protocolType != consumerProtocolType {
		return
	}
	topics := map[string]bool{}
	for _, m := range g.members {
		ts, ok := parseSubscriptionTopics(m.metadata(g.protocol))
		if !ok {
			return
		}
		for _, t := range ts {
			topics[t] = true
		}
	}
	g.subscribed, g.subsKnown = topics, true
}

// consumerProtocolType is the protocol type of Kafka consumers.
const consumerProtocolType = "consumer"

// parseSubscriptionTopics reads the topic list at the head of a consumer
// protocol subscription (version int16, [topic string] ...); later fields
// are ignored.
func parseSubscriptionTopics(p []byte) ([]string, bool) {
	r := newReader(p)
	if r.int16("subscription version"); r.err != nil {
		return nil, false
	}
	n := r.arrayLen("topics", 2)
	topics := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		topics = append(topics, r.string("topic"))
	}
	return topics, r.err == nil
}
