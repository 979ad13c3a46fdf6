package group

import (
	"time"
)

// ReasonKind classifies why a group rebalanced: KIP-800's reasons (Kafka
// 3.2), recorded by the coordinator on Kafka 2.8's wire. It is the
// `reason` label of the rebalance counter.
type ReasonKind string

// The reasons. A rebalance has exactly one: what moved the group to
// PreparingRebalance.
const (
	// A new member joined (id, client id, host and protocol recorded).
	ReasonMemberJoined ReasonKind = "member_joined"
	// A member sent LeaveGroup (or an admin removed a static member). Kafka
	// 2.8's LeaveGroup (v4 at most) carries no client reason; KIP-800's
	// v5 does, and it would be recorded here.
	ReasonMemberLeft ReasonKind = "member_left"
	// A member missed its session timeout (no heartbeat).
	ReasonSessionExpired ReasonKind = "session_expired"
	// A member was dropped from the previous join for not rejoining within
	// the rebalance timeout (max.poll.interval.ms for Java consumers) while
	// its session was still alive, i.e. it kept heartbeating but was busy
	// processing; the rebalance is the one its rejoin (same client id and
	// host, new member id) started.
	ReasonMaxPollExpired ReasonKind = "max_poll_interval_expired"
	// Members did not send SyncGroup within the rebalance timeout after the
	// join completed (KAFKA-12890).
	ReasonPendingSyncExpired ReasonKind = "pending_sync_expired"
	// A member rejoined with new metadata (its subscription changed), or
	// the leader rejoined a Stable group (how consumers signal topic
	// metadata changes such as new partitions).
	ReasonMetadataChanged ReasonKind = "metadata_changed"
	// A static member (group.instance.id) rejoined with a new member id
	// and the group had to rebalance for it.
	ReasonStaticReplaced ReasonKind = "static_member_replaced"
	// Anything else: a failed write of the assignment, a freshly loaded
	// group over group.max.size.
	ReasonOther ReasonKind = "other"
)

// ReasonKinds lists every kind, in a fixed order (metrics, docs).
var ReasonKinds = []ReasonKind{ReasonMemberJoined, ReasonMemberLeft, ReasonSessionExpired, ReasonMaxPollExpired,
	ReasonPendingSyncExpired, ReasonMetadataChanged, ReasonStaticReplaced, ReasonOther}

// Rebalance is one rebalance as its coordinator recorded it.
type Rebalance struct {
	Time time.Time
	// Generation is the generation the rebalance replaces.
	Generation int32
	Kind       ReasonKind
	// The member that caused it, when one did.
	MemberID, GroupInstanceID, ClientID, ClientHost, Protocol string
	// Reason is the sentence Kafka logs ("Adding new member ... with group
	// instance id ...", "removing member ... on heartbeat expiration").
	Reason string
}

// newReason builds a rebalance reason caused by m (nil: no member).
func newReason(kind ReasonKind, m *member, text string) Rebalance {
	r := Rebalance{Kind: kind, Reason: text}
	if m != nil {
		r.MemberID, r.GroupInstanceID, r.ClientID, r.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
		if len(m.protocols) > 0 {
			r.Protocol = m.protocols[0].Name
		}
	}
	return r
}

// otherReason is a reason no member caused.
func otherReason(text string) Rebalance { return newReason(ReasonOther, nil, text) }

// instanceOpt prints an instance id as Scala prints an Option[String].
func instanceOpt(id string) string {
	if id == "" {
		return "None"
	}
	return "Some(" + id + ")"
}
