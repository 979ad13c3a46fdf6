package fetchsession

import (
	"math/rand/v2"
	"sync"
	"time"

	"samsa/kafka"
)

// DefaultEvictionAge is Kafka 2.8's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
// (a constant there, not a config).
const DefaultEvictionAge = 120 * time.Second

// Config configures NewCache.
type Config struct {
	// Slots is max.incremental.fetch.session.cache.slots (1000); 0 keeps
	// no session (every fetch is answered in full with session id 0).
	Slots int
	// EvictionAge is how long a session is protected from eviction after
	// creation, and how long unused before it is stale (default 120 s).
	EvictionAge time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NewID returns a candidate session id (default: random in
	// 1..MaxInt32-1, as Kafka); ids in use or <= 0 are drawn again.
	NewID func() int32
}

// Cache is the broker's fetch session cache (Kafka's FetchSessionCache
// and FetchManager). It is safe for concurrent use.
type Cache struct {
	cfg Config

	mu struct {
		sync.Mutex
		sessions   map[int32]*session
		partitions int // sum of the sessions' sizes at their last use
		sizes      map[int32]int
		evictions  int64
	}
}

// NewCache returns an empty cache.
func NewCache(cfg Config) *Cache {
	if cfg.EvictionAge <= 0 {
		cfg.EvictionAge = DefaultEvictionAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = func() int32 { return 1 + rand.Int32N(1<<31-2) }
	}
	c := &Cache{cfg: cfg}
	c.mu.sessions = map[int32]*session{}
	c.mu.sizes = map[int32]int{}
	return c
}

// Stats are the cache's gauges (Kafka's NumIncrementalFetchSessions,
// NumIncrementalFetchPartitionsCached, IncrementalFetchSessionEvictionsPerSec).
type Stats struct {
	Sessions   int
	Partitions int
	Evictions  int64
}

// Stats returns the current gauges.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Sessions: len(c.mu.sessions), Partitions: c.mu.partitions, Evictions: c.mu.evictions}
}

// removeLocked drops s from the cache; c.mu held.
func (c *Cache) removeLocked(s *session) {
	if c.mu.sessions[s.id] != s {
		return
	}
	delete(c.mu.sessions, s.id)
	c.mu.partitions -= c.mu.sizes[s.id]
	delete(c.mu.sizes, s.id)
	s.removed = true
}

// touchLocked records a use of s with size partitions; c.mu held.
func (c *Cache) touchLocked(s *session, size int, now time.Time) {
	s.lastUsed = now
	c.mu.partitions += size - c.mu.sizes[s.id]
	c.mu.sizes[s.id] = size
}

// evictKey orders sessions by value (Kafka's EvictableKey): unprivileged
// before privileged, then smaller before larger, then by id.
type evictKey struct {
	privileged bool
	size       int
	id         int32
}

func (a evictKey) less(b evictKey) bool {
	if a.privileged != b.privileged {
		return !a.privileged
	}
	if a.size != b.size {
		return a.size < b.size
	}
	return a.id < b.id
}

// tryEvictLocked frees a slot for a new session of size partitions, or
// reports that none may be freed (Kafka's FetchSessionCache.tryEvict).
// It scans the sessions: at most Slots of them, and only when the cache is
// full. c.mu held.
func (c *Cache) tryEvictLocked(privileged bool, size int, now time.Time) bool {
	var lru *session
	for _, s := range c.mu.sessions {
		if lru == nil || s.lastUsed.Before(lru.lastUsed) {
			lru = s
		}
	}
	if lru == nil {
		return false
	}
	if now.Sub(lru.lastUsed) > c.cfg.EvictionAge {
		c.removeLocked(lru)
		c.mu.evictions++
		return true
	}
	var victim *session
	var vk evictKey
	for _, s := range c.mu.sessions {
		old := now.Sub(s.created) > c.cfg.EvictionAge
		// Old sessions may be evicted by anyone; young ones only by a
		// privileged (follower) session, and only if unprivileged.
		if !old && !(privileged && !s.privileged) {
			continue
		}
		k := evictKey{s.privileged, c.mu.sizes[s.id], s.id}
		if victim == nil || k.less(vk) {
			victim, vk = s, k
		}
	}
	if victim == nil || (evictKey{privileged, size, 0}).less(vk) {
		return false
	}
	c.removeLocked(victim)
	c.mu.evictions++
	return true
}

// maybeCreate caches a new session holding parts (with what the response
// told the client) and returns its id, or InvalidSessionID when no slot
// can be had (Kafka's maybeCreateSession).
func (c *Cache) maybeCreate(privileged bool, parts []*cached) int32 {
	if c.cfg.Slots <= 0 || len(parts) == 0 {
		return InvalidSessionID
	}
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.sessions) >= c.cfg.Slots && !c.tryEvictLocked(privileged, len(parts), now) {
		return InvalidSessionID
	}
	id := c.cfg.NewID()
	for tries := 0; id <= 0 || c.mu.sessions[id] != nil; tries++ {
		if tries > 1000 {
			return InvalidSessionID // NewID keeps colliding: no session
		}
		id = c.cfg.NewID()
	}
	s := &session{id: id, privileged: privileged, created: now, epoch: NextEpoch(InitialEpoch)}
	s.mu.parts = make(map[kafka.TopicPartition]*cached, len(parts))
	s.mu.order = parts[:0]
	for _, p := range parts {
		if _, dup := s.mu.parts[p.TP]; !dup { // a partition named twice is cached once
			s.mu.parts[p.TP] = p
			s.mu.order = append(s.mu.order, p)
		}
	}
	c.mu.sessions[id] = s
	c.touchLocked(s, len(s.mu.order), now)
	return id
}

// SessionSize returns the partition count of session id, if cached.
func (c *Cache) SessionSize(id int32) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.mu.sessions[id]; s != nil {
		return c.mu.sizes[id], true
	}
	return 0, false
}
