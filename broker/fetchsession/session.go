package fetchsession

import (
	"math"
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
}

// session is one cached fetch session (Kafka's FetchSession).
type session struct {
	id         int32
	privileged bool      // created by a follower fetch; immutable
	created    time.Time // immutable

	mu struct {
		sync.Mutex
		parts map[kafka.TopicPartition]*cached
		order []*cached // fetch and response order; sent partitions move to the end
	}
	// The fields below are guarded by the Cache's mu.
	lastUsed time.Time
	epoch    int32
	removed  bool
}

// sizeLocked is the partition count; s.mu held.
func (s *session) sizeLocked() int { return len(s.mu.order) }

// updateLocked applies an incremental request (Kafka's FetchSession.update):
// named partitions are added or get the new request values, forgotten ones
// are removed. s.mu held.
func (s *session) updateLocked(parts []Entry, forgotten []kafka.TopicPartition) {
	for _, e := range parts {
		if c, ok := s.mu.parts[e.TP]; ok {
			c.Req = e.Req
			continue
		}
		c := &cached{Entry: e, highWatermark: -1, logStartOffset: -1, lastStableOffset: -1}
		s.mu.parts[e.TP] = c
		s.mu.order = append(s.mu.order, c)
	}
	if len(forgotten) == 0 {
		return
	}
	drop := false
	for _, tp := range forgotten {
		if _, ok := s.mu.parts[tp]; ok {
			delete(s.mu.parts, tp)
			drop = true
		}
	}
	if drop {
		kept := s.mu.order[:0]
		for _, c := range s.mu.order {
			if _, ok := s.mu.parts[c.TP]; ok && s.mu.parts[c.TP] == c {
				kept = append(kept, c)
			}
		}
		clear(s.mu.order[len(kept):])
		s.mu.order = kept
	}
}
