package fetchsession

import "github.com/twmb/franz-go/pkg/kerr"
import "samsa/kafka"

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
	parts    []Entry  // Sessionless and Full: the request's; Incremental: a snapshot of the session's
	sess     *session // Incremental
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
	defer s.mu.Unlock()
	s.updateLocked(req.Partitions, req.Forgotten)
	if s.sizeLocked() == 0 {
		c.removeLocked(s)
		return &Context{Kind: Sessionless, cache: c, follower: req.Follower, parts: req.Partitions}
	}
	c.touchLocked(s, s.sizeLocked(), c.cfg.Now())
	s.epoch = NextEpoch(s.epoch)
	parts := make([]Entry, len(s.mu.order))
	for i, p := range s.mu.order {
		parts[i] = p.Entry
	}
	return &Context{Kind: Incremental, cache: c, follower: req.Follower, parts: parts, sess: s}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	sent := make([]*cached, 0, len(x.parts))
	for i, e := range x.parts {
		c := s.mu.parts[e.TP]
		if c == nil {
			// Forgotten by a concurrent request of the same session: answer it anyway.
			include[i] = true
			continue
		}
		include[i] = c.mustRespond(resps[i])
		if include[i] {
			sent = append(sent, c)
		}
	}
	if len(sent) > 0 && len(sent) < len(s.mu.order) {
		sentSet := make(map[*cached]struct{}, len(sent))
		for _, c := range sent {
			sentSet[c] = struct{}{}
		}
		kept := make([]*cached, 0, len(s.mu.order))
		for _, c := range s.mu.order {
			if _, ok := sentSet[c]; !ok {
				kept = append(kept, c)
			}
		}
		for _, c := range sent {
			if s.mu.parts[c.TP] == c {
				kept = append(kept, c)
			}
		}
		s.mu.order = kept
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
