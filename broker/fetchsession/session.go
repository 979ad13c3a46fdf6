package fetchsession

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"samsa/kafka"
)

// Epochs and the invalid session id of FetchRequest v7+ (Kafka's
// FetchMetadata).
const (
	InvalidSessionID int32 = 0
	InitialEpoch     int32 = 0
	FinalEpoch       int32 = -1
)

// NextEpoch is Kafka's FetchMetadata.nextEpoch: after MaxInt32 comes 1
// (0 means "new session"), and a negative epoch stays final.
func NextEpoch(e int32) int32 {
	switch {
	case e < 0:
		return FinalEpoch
	case e == math.MaxInt32:
		return 1
	default:
		return e + 1
	}
}

// PartitionRequest is what a FetchRequest asks of one partition. A
// session keeps the latest values its client sent.
type PartitionRequest struct {
	FetchOffset        int64
	LogStartOffset     int64 // the follower's log start offset (v5+), -1 for consumers
	MaxBytes           int32
	CurrentLeaderEpoch int32 // v9+, -1 unset
	LastFetchedEpoch   int32 // v12+, -1 unset
}

// Entry is one partition of a request or a session, with its request.
type Entry struct {
	TP  kafka.TopicPartition
	Req PartitionRequest
}

// cached is one partition of a session: the request values and what the
// client was last told (Kafka's CachedPartition).
type cached struct {
	Entry
	highWatermark    int64 // -1: send the partition next time
	logStartOffset   int64
	lastStableOffset int64
	// seq orders the session (smaller first); a partition that is sent
	// gets the next seq, which moves it to the end.
	seq uint64
	// dirty: in the session's dirty list, to be examined by the next fetch.
	dirty bool
	// unnoticed: examined by a sweep only (not dirty when the fetch began,
	// and not noticed since); cleared when noticed or answered.
	unnoticed bool
	// suspect: a sweep answered a change no notice had marked; it is
	// counted as unnoticed only if no notice comes before the session's
	// next fetch (session.mu.suspects), since a change is visible to a read
	// before its notice runs.
	suspect bool
}

// session is one cached fetch session (Kafka's FetchSession).
type session struct {
	id         int32
	privileged bool          // created by a follower fetch; immutable
	created    time.Time     // immutable
	wake       chan struct{} // buffer 1: a partition became dirty; immutable

	mu struct {
		sync.Mutex
		parts map[kafka.TopicPartition]*cached
		seq   uint64 // the next seq
		// dirty lists the partitions a changed-only fetch must examine
		// (changed since they were last answered, named by a request, or
		// left hot by the last answer); entries forgotten since are skipped.
		dirty []*cached
		// suspects are the partitions a sweep answered with no notice,
		// judged when the next fetch arrives (usually empty).
		suspects []suspect
		// gone: removed from the cache (dropSuspects); no new suspects.
		gone bool
	}
	// The fields below are guarded by the Cache's mu.
	lastUsed  time.Time
	lastSweep time.Time // the last fetch that examined every partition
	epoch     int32
	removed   bool
}

func newSession(id int32, privileged bool, now time.Time, size int) *session {
	s := &session{id: id, privileged: privileged, created: now, lastSweep: now, epoch: NextEpoch(InitialEpoch),
		wake: make(chan struct{}, 1)}
	s.mu.parts = make(map[kafka.TopicPartition]*cached, size)
	return s
}

// sizeLocked is the partition count; s.mu held.
func (s *session) sizeLocked() int { return len(s.mu.parts) }

// addLocked caches c at the end of the order, dirty; s.mu held.
func (s *session) addLocked(c *cached) {
	c.seq = s.mu.seq
	s.mu.seq++
	s.mu.parts[c.TP] = c
	s.markLocked(c)
}

// noticeLocked records a change notice for c (Cache.Changed): c goes on
// the dirty list, and a sweep's unnoticed or suspect flag is cleared, the
// change having been noticed after all; s.mu held.
func (s *session) noticeLocked(c *cached) {
	c.unnoticed, c.suspect = false, false
	s.markLocked(c)
}

// markLocked puts c on the dirty list (a notice, a partition the request
// names, or one the last answer left hot); s.mu held.
func (s *session) markLocked(c *cached) {
	if !c.dirty {
		c.dirty = true
		s.mu.dirty = append(s.mu.dirty, c)
	}
}

// signal wakes the session's parked fetch, if any.
func (s *session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// takeDirtyLocked empties the dirty list and returns the partitions on it
// that are still cached, in session order; s.mu held.
func (s *session) takeDirtyLocked() []*cached {
	out := s.mu.dirty[:0:0]
	for _, c := range s.mu.dirty {
		c.dirty = false
		if s.mu.parts[c.TP] == c {
			out = append(out, c)
		}
	}
	clear(s.mu.dirty)
	s.mu.dirty = s.mu.dirty[:0]
	sortBySeq(out)
	return out
}

// sweepLocked returns every partition in session order, flagging those
// not in dirty (the partitions taken from the dirty list) as unnoticed;
// s.mu held.
func (s *session) sweepLocked(dirty []*cached) []*cached {
	all := s.orderedLocked()
	for _, c := range all {
		c.unnoticed = true
	}
	for _, c := range dirty {
		c.unnoticed = false
	}
	return all
}

// orderedLocked returns every partition in session order; s.mu held.
func (s *session) orderedLocked() []*cached {
	out := make([]*cached, 0, len(s.mu.parts))
	for _, c := range s.mu.parts {
		out = append(out, c)
	}
	sortBySeq(out)
	return out
}

func sortBySeq(cs []*cached) {
	slices.SortFunc(cs, func(a, b *cached) int { return cmp.Compare(a.seq, b.seq) })
}

// updateLocked applies an incremental request (Kafka's FetchSession.update):
// named partitions are added or get the new request values (and are
// examined by this fetch), forgotten ones are removed. It returns the
// partitions added and removed, for the cache's change index. s.mu held.
func (s *session) updateLocked(parts []Entry, forgotten []kafka.TopicPartition) (added, removed []kafka.TopicPartition) {
	for _, e := range parts {
		if c, ok := s.mu.parts[e.TP]; ok {
			c.Req = e.Req
			s.markLocked(c)
			continue
		}
		s.addLocked(&cached{Entry: e, highWatermark: -1, logStartOffset: -1, lastStableOffset: -1})
		added = append(added, e.TP)
	}
	for _, tp := range forgotten {
		if _, ok := s.mu.parts[tp]; ok {
			delete(s.mu.parts, tp)
			removed = append(removed, tp)
		}
	}
	return added, removed
}
