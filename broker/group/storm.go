package group

import (
	"fmt"
	"sort"
	"time"
)

// Rebalance history and the rebalance storm detector (Samsa; Kafka only
// logs "Preparing to rebalance group ... (reason: ...)").
//
// Every rebalance is recorded when it starts (prepareRebalance): logged
// once at INFO with the group, the generation it replaces and its reason,
// passed to Options.OnRebalance (the broker's counter per group and
// reason), and kept in a ring of the last HistorySize. Member removals
// that do not start a rebalance of their own (a member dropped from a
// join for not rejoining in time) are kept as member events. Both live
// only as long as the group's coordinator: a coordinator failover starts
// them afresh.
//
// A group that started more than StormCount rebalances within StormWindow
// is storming. The culprit is the client (client id and host, because a
// member that is removed comes back with a new member id) with the most
// removals and triggers in the window, and the cause follows from their
// kind. The WARN is logged when the storm starts and then at most once
// per window while it lasts.

// memberEvent is one removal or trigger attributed to a client.
type memberEvent struct {
	at                   time.Time
	kind                 ReasonKind
	memberID, instanceID string
	clientID, clientHost string
}

// maxWindowEvents bounds the per-group window lists whatever the
// configuration: a group cannot grow them past this many entries.
const maxWindowEvents = 256

// Storm describes a rebalance storm.
type Storm struct {
	Since      time.Time // first rebalance of the window when it was detected
	Rebalances int       // rebalances in the window at the last one
	Window     time.Duration
	// The client that keeps causing it.
	MemberID, GroupInstanceID, ClientID, ClientHost string
	Kind                                            ReasonKind // the kind of most of its removals or triggers
	Times                                           int        // how many of them in the window
	Cause                                           string     // e.g. "member X exceeded max.poll.interval.ms 3 times: ..."
}

// GroupRebalances is what the coordinator knows of one group's
// rebalances (Coordinator.Rebalances).
type GroupRebalances struct {
	Group      string
	State      string
	Generation int32
	// Counts per reason since the group was loaded on this coordinator.
	Counts map[ReasonKind]int64
	// History holds the last HistorySize rebalances, oldest first.
	History []Rebalance
	// Storm is non-nil while more than StormCount rebalances started
	// within StormWindow.
	Storm *Storm
}

// rebalanceSnapshot is what a group publishes for Coordinator.Rebalances.
type rebalanceSnapshot struct {
	generation int32
	counts     map[ReasonKind]int64
	history    []Rebalance
	window     []time.Time // start times of the rebalances in the window
	storm      *Storm      // culprit as of the last rebalance
}

// noteMemberEvent records a removal of m that did not start a rebalance
// by itself (or that the storm detector should attribute to m's client).
func (g *group) noteMemberEvent(m *member, kind ReasonKind) {
	now := g.c.clock.Now()
	g.memberEvents = append(g.memberEvents, memberEvent{at: now, kind: kind, memberID: m.id, instanceID: m.instanceID,
		clientID: m.clientID, clientHost: m.clientHost})
	g.pruneWindow(now)
	if kind == ReasonMaxPollExpired {
		g.pollExpired[clientKey(m.clientID, m.clientHost)] = now
	}
}

func clientKey(clientID, host string) string { return clientID + "\x00" + host }

// pruneWindow drops window entries older than StormWindow (and beyond
// maxWindowEvents).
func (g *group) pruneWindow(now time.Time) {
	cut := now.Add(-g.c.cfg.StormWindow)
	keep := func(at time.Time) bool { return at.After(cut) }
	i := 0
	for i < len(g.windowRebalances) && !keep(g.windowRebalances[i].Time) {
		i++
	}
	g.windowRebalances = trimFront(g.windowRebalances[i:])
	j := 0
	for j < len(g.memberEvents) && !keep(g.memberEvents[j].at) {
		j++
	}
	g.memberEvents = trimFront(g.memberEvents[j:])
	for k, at := range g.pollExpired {
		if !keep(at) {
			delete(g.pollExpired, k)
		}
	}
}

func trimFront[T any](xs []T) []T {
	if len(xs) > maxWindowEvents {
		xs = xs[len(xs)-maxWindowEvents:]
	}
	return append([]T(nil), xs...)
}

// takePollExpired reports (and forgets) whether a member of this client
// was recently dropped for exceeding the rebalance timeout.
func (g *group) takePollExpired(clientID, host string) bool {
	k := clientKey(clientID, host)
	at, ok := g.pollExpired[k]
	if ok {
		delete(g.pollExpired, k)
	}
	return ok && at.After(g.c.clock.Now().Add(-g.c.cfg.StormWindow))
}

// recordRebalance logs, counts and keeps r, the reason of the rebalance
// starting now, and runs the storm detector.
func (g *group) recordRebalance(r Rebalance) {
	now := g.c.clock.Now()
	r.Time, r.Generation = now, g.generation
	g.log.WithFields(map[string]any{"generation": g.generation, "reason_kind": string(r.Kind), "reason": r.Reason,
		"member": r.MemberID, "client_id": r.ClientID, "client_host": r.ClientHost,
		"offsets_partition": g.partition}).
		Info("group: preparing to rebalance")
	g.rebalanceCounts[r.Kind]++
	g.history = append(g.history, r)
	if n := max(g.c.cfg.HistorySize, 1); len(g.history) > n {
		g.history = append([]Rebalance(nil), g.history[len(g.history)-n:]...)
	}
	g.windowRebalances = append(g.windowRebalances, r)
	g.pruneWindow(now)
	if g.c.onRebalance != nil {
		g.c.onRebalance(g.id, r)
	}
	g.detectStorm(now)
	g.publishRebalances()
}

// detectStorm finds the culprit once more than StormCount rebalances
// started within the window, and logs the WARN.
func (g *group) detectStorm(now time.Time) {
	k := g.c.cfg.StormCount
	if k <= 0 || len(g.windowRebalances) <= k {
		if g.storm != nil && len(g.windowRebalances) <= k {
			g.storm = nil
		}
		return
	}
	s := g.culprit()
	s.Since, s.Rebalances, s.Window = g.windowRebalances[0].Time, len(g.windowRebalances), g.c.cfg.StormWindow
	starting := g.storm == nil
	g.storm = &s
	if !starting && now.Sub(g.stormWarned) < g.c.cfg.StormWindow {
		return
	}
	g.stormWarned = now
	g.log.WithFields(map[string]any{"generation": g.generation, "rebalances": s.Rebalances, "window": s.Window,
		"member": s.MemberID, "client_id": s.ClientID, "client_host": s.ClientHost, "reason_kind": string(s.Kind)}).
		Warn(fmt.Sprintf("group: rebalance storm: %d rebalances within %v; %s; %s", s.Rebalances, s.Window, s.Cause, StormAdvice(s.Kind)))
}

// culprit picks the client with the most removals (max.poll.interval,
// session, pending sync) in the window, else the most triggers.
func (g *group) culprit() Storm {
	type tally struct {
		ev    memberEvent
		kinds map[ReasonKind]int
		n     int
	}
	pick := func(evs []memberEvent) *tally {
		by := map[string]*tally{}
		var keys []string
		for _, e := range evs {
			ck := clientKey(e.clientID, e.clientHost)
			t := by[ck]
			if t == nil {
				t = &tally{kinds: map[ReasonKind]int{}}
				by[ck] = t
				keys = append(keys, ck)
			}
			t.ev = e // the latest member id of that client
			t.kinds[e.kind]++
			t.n++
		}
		sort.SliceStable(keys, func(i, j int) bool { return by[keys[i]].n > by[keys[j]].n })
		if len(keys) == 0 {
			return nil
		}
		return by[keys[0]]
	}
	var triggers []memberEvent
	for _, r := range g.windowRebalances {
		if r.ClientID != "" || r.MemberID != "" {
			triggers = append(triggers, memberEvent{at: r.Time, kind: r.Kind, memberID: r.MemberID,
				instanceID: r.GroupInstanceID, clientID: r.ClientID, clientHost: r.ClientHost})
		}
	}
	t := pick(g.memberEvents)
	if t == nil {
		t = pick(triggers)
	}
	if t == nil {
		return Storm{Kind: ReasonOther, Cause: "no member is to blame: " + dominantOther(g.windowRebalances)}
	}
	kind, times := ReasonOther, 0
	for _, k := range ReasonKinds {
		if t.kinds[k] > times {
			kind, times = k, t.kinds[k]
		}
	}
	s := Storm{MemberID: t.ev.memberID, GroupInstanceID: t.ev.instanceID, ClientID: t.ev.clientID,
		ClientHost: t.ev.clientHost, Kind: kind, Times: times}
	s.Cause = fmt.Sprintf("member %s (client.id %s, host %s) %s %d times: %s",
		s.MemberID, s.ClientID, s.ClientHost, stormVerb(kind), times, StormDiagnosis(kind))
	return s
}

func dominantOther(rs []Rebalance) string {
	if len(rs) == 0 {
		return "unknown"
	}
	return rs[len(rs)-1].Reason
}

// stormVerb says what the culprit did, per kind.
func stormVerb(k ReasonKind) string {
	switch k {
	case ReasonMaxPollExpired:
		return "exceeded max.poll.interval.ms (the rebalance timeout) while still heartbeating"
	case ReasonSessionExpired:
		return "missed its session timeout"
	case ReasonPendingSyncExpired:
		return "did not send SyncGroup within the rebalance timeout"
	case ReasonMemberJoined:
		return "joined as a new member"
	case ReasonMemberLeft:
		return "left the group"
	case ReasonMetadataChanged:
		return "rejoined with changed metadata"
	case ReasonStaticReplaced:
		return "was replaced under its group.instance.id"
	}
	return "caused a rebalance"
}

// StormDiagnosis is the likely cause of a storm of kind k, in a few words.
func StormDiagnosis(k ReasonKind) string {
	switch k {
	case ReasonMaxPollExpired:
		return "processing slower than the poll interval"
	case ReasonSessionExpired:
		return "heartbeats stop (GC pauses, a blocked heartbeat thread, network drops)"
	case ReasonPendingSyncExpired:
		return "the member stalls between JoinGroup and SyncGroup (a slow rebalance listener or assignor)"
	case ReasonMemberJoined, ReasonMemberLeft, ReasonStaticReplaced:
		return "the consumer restarts or is rescheduled repeatedly"
	case ReasonMetadataChanged:
		return "the subscription or topic metadata keeps changing"
	}
	return "unknown"
}

// StormAdvice is the runbook's remedy for a storm of kind k
// (docs/groups.md, samsa-doctor).
func StormAdvice(k ReasonKind) string {
	switch k {
	case ReasonMaxPollExpired:
		return "raise max.poll.interval.ms (Sarama: Consumer.Group.Rebalance.Timeout) above the slowest batch, lower max.poll.records, or use the cooperative-sticky assignor so fewer partitions move"
	case ReasonSessionExpired:
		return "raise session.timeout.ms or fix the stalls, and use static membership (group.instance.id) so restarts do not rebalance"
	case ReasonPendingSyncExpired:
		return "raise max.poll.interval.ms or make the rebalance callback faster"
	case ReasonMemberJoined, ReasonMemberLeft, ReasonStaticReplaced:
		return "use static membership (group.instance.id with a session timeout longer than a restart) and the cooperative-sticky assignor"
	case ReasonMetadataChanged:
		return "keep subscriptions identical across members and stable (regex subscriptions over churning topics rebalance on every match)"
	}
	return "see docs/groups.md"
}

// publishRebalances stores the snapshot Coordinator.Rebalances reads.
func (g *group) publishRebalances() {
	counts := make(map[ReasonKind]int64, len(g.rebalanceCounts))
	for k, v := range g.rebalanceCounts {
		counts[k] = v
	}
	win := make([]time.Time, len(g.windowRebalances))
	for i, r := range g.windowRebalances {
		win[i] = r.Time
	}
	var st *Storm
	if g.storm != nil {
		c := *g.storm
		st = &c
	}
	g.rebalSnap.Store(&rebalanceSnapshot{generation: g.generation, counts: counts,
		history: append([]Rebalance(nil), g.history...), window: win, storm: st})
}

// Rebalances returns the rebalance records of the groups this broker
// coordinates (only those that rebalanced at least once), by group id.
// A storm is reported while more than StormCount of the recorded
// rebalance starts lie within StormWindow of now.
func (c *Coordinator) Rebalances() []GroupRebalances {
	now := c.clock.Now()
	c.mu.Lock()
	var gs []*group
	for _, ps := range c.mu.partitions {
		for _, g := range ps.groups {
			gs = append(gs, g)
		}
	}
	c.mu.Unlock()
	var out []GroupRebalances
	for _, g := range gs {
		s := g.rebalSnap.Load()
		if s == nil {
			continue
		}
		gr := GroupRebalances{Group: g.id, State: g.snapshot.Load().state.String(), Generation: s.generation,
			Counts: s.counts, History: s.history}
		if s.storm != nil && c.cfg.StormCount > 0 {
			n := 0
			for _, at := range s.window {
				if at.After(now.Add(-c.cfg.StormWindow)) {
					n++
				}
			}
			if n > c.cfg.StormCount {
				st := *s.storm
				gr.Storm = &st
			}
		}
		out = append(out, gr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}
