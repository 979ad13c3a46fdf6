package group

import (
	"bytes"
	"context"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// State is a group's state, as in Kafka's GroupMetadata.
type State int8

// The group states. Transitions (Kafka's validPreviousStates):
//
//	Empty               <- PreparingRebalance
//	PreparingRebalance  <- Empty, Stable, CompletingRebalance
//	CompletingRebalance <- PreparingRebalance
//	Stable              <- CompletingRebalance
//	Dead                <- any (unloaded, deleted, expired)
const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

// String returns Kafka's name for s (DescribeGroups, ListGroups v4).
func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	default:
		return "Dead"
	}
}

// validTransition reports whether a group may move from one state to
// another (Kafka's GroupState.validPreviousStates).
func validTransition(from, to State) bool {
	switch to {
	case Empty:
		return from == PreparingRebalance
	case PreparingRebalance:
		return from == Empty || from == Stable || from == CompletingRebalance
	case CompletingRebalance:
		return from == PreparingRebalance
	case Stable:
		return from == CompletingRebalance
	case Dead:
		return true
	}
	return false
}

// member is one group member. Owned by the group's run goroutine.
type member struct {
	id               string
	instanceID       string // "" for dynamic members
	clientID         string
	clientHost       string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []Protocol
	assignment       []byte

	// isNew: joined in the current rebalance and not yet answered; such a
	// member expires after NewMemberJoinTimeout (Kafka's isNew).
	isNew bool
	// joinReply is non-nil while the member awaits its JoinGroup answer.
	joinReply chan<- JoinResult
	// syncReply is non-nil while the member awaits its SyncGroup answer.
	syncReply chan<- SyncResult

	hbTimer Timer
	hbToken uint64
}

// metadata returns the member's metadata for protocol.
func (m *member) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// matches reports whether protocols equal the member's (names and
// metadata, in order): Kafka's MemberMetadata.matches.
func (m *member) matches(protocols []Protocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i := range protocols {
		if protocols[i].Name != m.protocols[i].Name || !bytes.Equal(protocols[i].Metadata, m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// offsetEntry is a committed offset held in memory.
type offsetEntry struct {
	OffsetValue
}

// joinKind is the delayed join the group waits on in PreparingRebalance.
type joinKind int8

const (
	joinNone    joinKind = iota
	joinInitial          // InitialDelayedJoin: never completes early
	joinNormal           // DelayedJoin: completes when every member rejoined
)

// listing is the snapshot ListGroups reads without visiting the group.
type listing struct {
	state        State
	protocolType string
}

// group is one consumer group. Its fields are owned by the run goroutine
// (STYLE S6.6), except the channels (immutable after newGroup) and the
// atomics.
type group struct {
	id        string
	partition int32
	c         *Coordinator
	log       logrus.FieldLogger

	reqCh     chan func()   // requests from handlers
	controlCh chan func()   // timers, append completions, expiry
	quit      chan struct{} // closed by stop
	done      chan struct{} // closed when run returns
	stopOnce  atomic.Bool
	exitCode  atomic.Int32            // the error for requests that arrive after done
	snapshot  atomic.Pointer[listing] // for ListGroups
	// offsetCount is len(offsets) after the last event, for Counts.
	offsetCount atomic.Int64
	appendCtx   context.Context    // cancelled on stop
	cancel      context.CancelFunc // cancels appendCtx

	state        State
	stateTime    time.Time
	generation   int32
	protocolType string
	protocol     string
	leader       string
	members      map[string]*member
	order        []string          // member ids in join order (deterministic leader choice)
	static       map[string]string // group.instance.id -> member id
	pending      map[string]Timer  // KIP-394 pending member ids
	numAwaiting  int               // members with a joinReply
	newAdded     bool              // a new member joined during the initial delay

	join          joinKind
	joinTimer     Timer
	joinToken     uint64
	joinRemaining time.Duration // InitialDelayedJoin's remaining budget

	// Pending syncs (group_pending_sync.go, KAFKA-12890).
	pendingSync map[string]bool // members that owe a SyncGroup this generation
	syncTimer   Timer
	syncToken   uint64

	// Rebalance history and the storm detector (storm.go).
	rebalanceCounts  map[ReasonKind]int64
	history          []Rebalance          // last HistorySize, oldest first
	windowRebalances []Rebalance          // started within StormWindow
	memberEvents     []memberEvent        // removals within StormWindow
	pollExpired      map[string]time.Time // clientKey -> dropped for the rebalance timeout
	storm            *Storm               // non-nil while storming
	stormWarned      time.Time            // last storm WARN
	rebalSnap        atomic.Pointer[rebalanceSnapshot]

	offsets     map[kafka.TopicPartition]offsetEntry
	txnOffsets  txnPending      // transactional offsets awaiting their marker (group_txn.go)
	subscribed  map[string]bool // topics of the consumer protocol subscriptions
	subsKnown   bool            // subscribed was parsed from every member
	appendQ     []*appendOp
	appending   bool
	hbTokenNext uint64
}

// newGroup returns a group in state Empty; the caller starts it.
func newGroup(c *Coordinator, id string, partition int32) *group {
	ctx, cancel := context.WithCancel(context.Background())
	g := &group{
		id:        id,
		partition: partition,
		c:         c,
		log:       c.log.WithField("group", id),
		reqCh:     make(chan func(), c.cfg.RequestChannelSize),
		controlCh: make(chan func(), 16),
		quit:      make(chan struct{}),
		done:      make(chan struct{}),
		appendCtx: ctx,
		cancel:    cancel,
		stateTime: c.clock.Now(),
		members:   map[string]*member{},
		static:    map[string]string{},
		pending:   map[string]Timer{},
		offsets:   map[kafka.TopicPartition]offsetEntry{},

		pendingSync:     map[string]bool{},
		rebalanceCounts: map[ReasonKind]int64{},
		pollExpired:     map[string]time.Time{},
	}
	g.publish()
	return g
}

// publish stores the ListGroups snapshot.
func (g *group) publish() {
	g.snapshot.Store(&listing{state: g.state, protocolType: g.protocolType})
}

// transition moves the group to state to. An invalid transition is a
// broken invariant of this package.
func (g *group) transition(to State) {
	if !validTransition(g.state, to) {
		panic("group: invalid state transition " + g.state.String() + " -> " + to.String())
	}
	g.state = to
	g.stateTime = g.c.clock.Now()
	g.publish()
}

// is reports whether the group is in state s.
func (g *group) is(s State) bool { return g.state == s }

// canRebalance: Kafka's GroupMetadata.canRebalance.
func (g *group) canRebalance() bool {
	return g.state == Stable || g.state == CompletingRebalance || g.state == Empty
}

// hasAllMembersJoined: Kafka's GroupMetadata.hasAllMembersJoined.
func (g *group) hasAllMembersJoined() bool {
	return len(g.members) == g.numAwaiting && len(g.pending) == 0
}

// rebalanceTimeout is the largest rebalance timeout of the members.
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// supportsProtocols: Kafka's GroupMetadata.supportsProtocols.
func (g *group) supportsProtocols(protocolType string, protocols []Protocol) bool {
	if g.is(Empty) || len(g.members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for _, p := range protocols {
		if g.allMembersSupport(p.Name) {
			return true
		}
	}
	return false
}

// allMembersSupport reports whether every member lists protocol name.
func (g *group) allMembersSupport(name string) bool {
	for _, m := range g.members {
		if !hasProtocol(m.protocols, name) {
			return false
		}
	}
	return true
}

func hasProtocol(ps []Protocol, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol every member supports that most
// members list first (Kafka's GroupMetadata.selectProtocol); ties go to
// the candidate the first member prefers. The group must have members.
func (g *group) selectProtocol() string {
	first := g.members[g.order[0]]
	var candidates []string
	for _, p := range first.protocols {
		if g.allMembersSupport(p.Name) {
			candidates = append(candidates, p.Name)
		}
	}
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if containsString(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best, bestVotes := "", -1
	for _, c := range candidates {
		if votes[c] > bestVotes {
			best, bestVotes = c, votes[c]
		}
	}
	return best
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// isStaticMemberFenced: Kafka's GroupMetadata.isStaticMemberFenced: the
// instance id is known but bound to another member id.
func (g *group) isStaticMemberFenced(memberID, instanceID string) bool {
	if instanceID == "" {
		return false
	}
	cur, ok := g.static[instanceID]
	return ok && cur != memberID
}

// addMember adds m (Kafka's GroupMetadata.add), recording its join reply.
func (g *group) addMember(m *member, reply chan<- JoinResult) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.leader == "" {
		g.leader = m.id
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	if m.instanceID != "" {
		g.static[m.instanceID] = m.id
	}
	m.joinReply = reply
	if reply != nil {
		g.numAwaiting++
	}
	g.publish()
}

// removeMember removes id (Kafka's GroupMetadata.remove): the leader
// passes to the next member, awaiting counts are fixed, timers stopped.
func (g *group) removeMember(id string) {
	m, ok := g.members[id]
	if !ok {
		return
	}
	if m.joinReply != nil {
		g.numAwaiting--
	}
	g.stopHeartbeat(m)
	delete(g.members, id)
	for i, x := range g.order {
		if x == id {
			g.order = append(g.order[:i:i], g.order[i+1:]...)
			break
		}
	}
	if m.instanceID != "" && g.static[m.instanceID] == id {
		delete(g.static, m.instanceID)
	}
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 {
		g.cancelSyncTimer()
	}
	if g.leader == id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// invokeJoin answers m's pending JoinGroup, if any.
func (g *group) invokeJoin(m *member, res JoinResult) {
	if m.joinReply == nil {
		return
	}
	m.joinReply <- res
	m.joinReply = nil
	g.numAwaiting--
}

// invokeSync answers m's pending SyncGroup, if any.
func (g *group) invokeSync(m *member, res SyncResult) {
	if m.syncReply == nil {
		return
	}
	m.syncReply <- res
	m.syncReply = nil
}

// joinError is a JoinGroup answer carrying only an error.
func joinError(memberID string, code int16) JoinResult {
	return JoinResult{ErrorCode: code, Generation: -1, MemberID: memberID}
}
