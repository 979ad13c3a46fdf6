package fetchsession

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

// Request is the session part of a FetchRequest v7+.
type Request struct {
	SessionID int32
	Epoch     int32
	// Follower: replica_id >= 0; its sessions are privileged.
	Follower bool
	// Partitions are the request's partitions, in request order.
	Partitions []Entry
	// Forgotten are the forgotten_topics_data partitions.
	Forgotten []kafka.TopicPartition
	// ChangedOnly: an incremental fetch examines only the partitions it
	// names and those on the session's dirty list (changed since they were
	// last answered, see Cache.Changed, or left hot by the last answer),
	// not the whole session. The answer is the same: a partition off that
	// list would answer what its client was last told, which an
	// incremental response leaves out.
	ChangedOnly bool
}

// Kind is the kind of context a request gets.
type Kind int

// Context kinds (Kafka's FetchContext subclasses).
const (
	// Sessionless: a full fetch answered without a session (id 0).
	Sessionless Kind = iota
	// Full: a full fetch that creates a session if a slot can be had.
	Full
	// Incremental: a fetch in an existing session.
	Incremental
	// Error: the request is answered with ErrorCode alone.
	Error
)

// PartitionResponse is what the handler is about to answer for one
// partition of Context.Partitions.
type PartitionResponse struct {
	HighWatermark  int64
	LogStartOffset int64
	// LastStableOffset is compared too (Kafka 2.8 does not: a
	// read_committed consumer then learns of a moved LSO only with the next
	// change of the partition).
	LastStableOffset int64
	HasRecords       bool
	ErrorCode        int16
	// PreferredReadReplica: the answer names one (KIP-392).
	PreferredReadReplica bool
	// Hot: the partition must be examined by the next fetch even if
	// nothing notifies a change (it had records, or records it could not
	// send now: a byte limit or a replication throttle).
	Hot bool
}

// Context is how one FetchRequest is served (Kafka's FetchContext): the
// partitions to read and, once read, which to answer and the response's
// session id.
type Context struct {
	Kind Kind
	// ErrorCode is the response's top-level error for Kind Error
	// (FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH).
	ErrorCode int16

	cache    *Cache
	follower bool
	parts    []Entry  // Sessionless and Full: the request's; Incremental: a snapshot of the session's (or of the examined ones)
	sess     *session // Incremental
	// examined are the cached partitions of parts (Incremental), and
	// changedOnly whether they are only the dirty ones.
	examined    []*cached
	changedOnly bool
	// unnoticed are the earlier sweep's suspects this request's arrival
	// confirmed (counted in NewContext, logged by Finish).
	unnoticed []unnoticedChange
}

// NewContext decides how req is served (Kafka's FetchManager.newContext,
// see the table in doc.go). For Incremental it applies the request to the
// session and moves the session to its next epoch.
func (c *Cache) NewContext(req Request) *Context {
	full := req.Epoch == InitialEpoch || req.Epoch == FinalEpoch
	if full {
		if req.SessionID != InvalidSessionID {
			// Any session named by a full fetch is closed.
			c.mu.Lock()
			if s := c.mu.sessions[req.SessionID]; s != nil {
				c.removeLocked(s)
			}
			c.mu.Unlock()
		}
		kind := Full
		if req.Epoch == FinalEpoch || c.cfg.Slots <= 0 {
			kind = Sessionless
		}
		return &Context{Kind: kind, cache: c, follower: req.Follower, parts: req.Partitions}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.sessions[req.SessionID]
	if s == nil {
		return &Context{Kind: Error, ErrorCode: kerr.FetchSessionIDNotFound.Code, cache: c}
	}
	if s.epoch != req.Epoch {
		return &Context{Kind: Error, ErrorCode: kerr.InvalidFetchSessionEpoch.Code, cache: c}
	}
	s.mu.Lock()
	// The suspects of the last sweep that no notice cleared before this
	// request arrived name missing notices (unnoticed.go).
	unnoticed, dropped := s.confirmSuspectsLocked()
	c.countUnnoticed(len(unnoticed), dropped)
	added, removed := s.updateLocked(req.Partitions, req.Forgotten)
	if s.sizeLocked() == 0 {
		s.mu.Unlock()
		c.removeLocked(s)
		return &Context{Kind: Sessionless, cache: c, follower: req.Follower, parts: req.Partitions}
	}
	now := c.cfg.Now()
	c.touchLocked(s, s.sizeLocked(), now)
	s.epoch = NextEpoch(s.epoch)
	// The dirty list is taken (and its flags cleared) before the handler
	// reads, so a change from now on marks the partition again.
	examined := s.takeDirtyLocked()
	switch {
	case !req.ChangedOnly:
		examined = s.orderedLocked()
	case c.cfg.SweepEvery > 0 && now.Sub(s.lastSweep) >= c.cfg.SweepEvery:
		examined = s.sweepLocked(examined)
		s.lastSweep = now
	}
	s.mu.Unlock()
	c.watchLocked(s, added, removed)
	x := &Context{Kind: Incremental, cache: c, follower: req.Follower, sess: s, changedOnly: req.ChangedOnly,
		unnoticed: unnoticed}
	x.setExamined(examined)
	return x
}

func (x *Context) setExamined(cs []*cached) {
	x.examined = cs
	x.parts = make([]Entry, len(cs))
	for i, c := range cs {
		x.parts[i] = c.Entry
	}
}

// Wake returns the channel a changed-only incremental fetch waits on: it
// receives when a partition of the session is marked dirty (then Grow).
// Nil for any other context.
func (x *Context) Wake() <-chan struct{} {
	if x.Kind != Incremental || !x.changedOnly {
		return nil
	}
	return x.sess.wake
}

// Grow adds to Partitions the session's partitions marked dirty since the
// context was made (or last grew), keeping session order, and reports
// whether there were any, already examined or not: the handler then reads
// Partitions again.
func (x *Context) Grow() bool {
	if x.Kind != Incremental || !x.changedOnly {
		return false
	}
	s := x.sess
	s.mu.Lock()
	more := s.takeDirtyLocked()
	s.mu.Unlock()
	if len(more) == 0 {
		return false
	}
	have := make(map[*cached]struct{}, len(x.examined))
	for _, c := range x.examined {
		have[c] = struct{}{}
	}
	all := append([]*cached(nil), x.examined...)
	for _, c := range more {
		if _, ok := have[c]; !ok {
			all = append(all, c)
		}
	}
	// A partition already examined that changed again must be read again
	// too: true even when nothing was added.
	if len(all) > len(x.examined) {
		sortBySeq(all)
		x.setExamined(all)
	}
	return true
}

// Partitions returns the partitions to read, in order: the request's for
// a full fetch, all of the session's for an incremental one, none for an
// error. The slice is owned by the Context; do not modify it.
func (x *Context) Partitions() []Entry { return x.parts }

// Finish takes the answers for Partitions (resps[i] for Partitions()[i]),
// sets include[i] to whether partition i goes into the response, and
// returns the response's session id. A Full context creates its session
// here, remembering what it answered; an Incremental one updates what its
// client was told and moves the answered partitions to the end of the
// session's order. Call it once.
func (x *Context) Finish(resps []PartitionResponse, include []bool) int32 {
	switch x.Kind {
	case Error, Sessionless:
		for i := range include {
			include[i] = true
		}
		return InvalidSessionID
	case Full:
		for i := range include {
			include[i] = true
		}
		// The new session starts with every partition dirty (maybeCreate).
		parts := make([]*cached, len(x.parts))
		backing := make([]cached, len(x.parts))
		for i, e := range x.parts {
			backing[i] = cached{Entry: e, highWatermark: resps[i].HighWatermark, logStartOffset: resps[i].LogStartOffset,
				lastStableOffset: resps[i].LastStableOffset}
			if resps[i].ErrorCode != 0 {
				backing[i].highWatermark = -1
			}
			parts[i] = &backing[i]
		}
		return x.cache.maybeCreate(x.follower, parts)
	}
	s := x.sess
	// The suspects the request's arrival confirmed (NewContext), logged
	// here, out of the locks.
	defer x.cache.reportUnnoticed(s.id, s.privileged, x.unnoticed)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range x.parts {
		c := s.mu.parts[e.TP]
		if c == nil || c != x.examined[i] {
			// Forgotten (or replaced) by a concurrent request of the same session: answer it anyway.
			include[i] = true
			continue
		}
		if c.unnoticed {
			// Only a sweep's unnoticed partitions keep what the client was
			// told, to name the change; the common path copies nothing.
			// The change is a suspect until its notice comes or the
			// session's next fetch arrives (unnoticed.go).
			before := *c
			if include[i] = c.mustRespond(resps[i]); include[i] {
				if s.suspectLocked(c, changeOf(&before, resps[i])) {
					x.cache.suspects.Add(1)
				}
			}
			c.unnoticed = false
		} else {
			include[i] = c.mustRespond(resps[i])
		}
		if include[i] {
			// Sent partitions move to the end, in answer order.
			c.seq = s.mu.seq
			s.mu.seq++
		}
		if include[i] || resps[i].Hot {
			// Sent (an error is sent every time; records move the
			// client's offset) or hot: examined again next time.
			s.markLocked(c)
		}
	}
	return s.id
}

// mustRespond is Kafka's CachedPartition.maybeUpdateResponseData with
// updateResponseData set: whether r must be sent, recording it.
func (c *cached) mustRespond(r PartitionResponse) bool {
	must := r.HasRecords || r.PreferredReadReplica
	if c.highWatermark != r.HighWatermark {
		must = true
		c.highWatermark = r.HighWatermark
	}
	if c.logStartOffset != r.LogStartOffset {
		must = true
		c.logStartOffset = r.LogStartOffset
	}
	if c.lastStableOffset != r.LastStableOffset {
		must = true
		c.lastStableOffset = r.LastStableOffset
	}
	if r.ErrorCode != 0 {
		// Sent again once the error clears.
		c.highWatermark = -1
		must = true
	}
	return must
}

// changeOf names what r changes against what the client was last told
// (before), for the unnoticed-change log line.
func changeOf(before *cached, r PartitionResponse) string {
	switch {
	case r.ErrorCode != 0:
		return fmt.Sprintf("error %d", r.ErrorCode)
	case r.HasRecords:
		return "records"
	case before.highWatermark != r.HighWatermark:
		return fmt.Sprintf("high watermark %d -> %d", before.highWatermark, r.HighWatermark)
	case before.logStartOffset != r.LogStartOffset:
		return fmt.Sprintf("log start %d -> %d", before.logStartOffset, r.LogStartOffset)
	case before.lastStableOffset != r.LastStableOffset:
		return fmt.Sprintf("last stable offset %d -> %d", before.lastStableOffset, r.LastStableOffset)
	default:
		return "preferred read replica"
	}
}
