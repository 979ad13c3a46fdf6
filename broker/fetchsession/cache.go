package fetchsession

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// DefaultEvictionAge is Kafka 2.8's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
// (a constant there, not a config).
const DefaultEvictionAge = 120 * time.Second

// DefaultSweepEvery is how often a changed-only session examines all of
// its partitions anyway (see Config.SweepEvery).
const DefaultSweepEvery = 5 * time.Second

// Config configures NewCache.
type Config struct {
	// Slots is max.incremental.fetch.session.cache.slots (1000); 0 keeps
	// no session (every fetch is answered in full with session id 0).
	Slots int
	// EvictionAge is how long a session is protected from eviction after
	// creation, and how long unused before it is stale (default 120 s).
	EvictionAge time.Duration
	// SweepEvery bounds how long a change that reached no session (a
	// notification path not wired, or lost) can go unanswered: a
	// changed-only fetch at least this long after its session's last sweep
	// examines every partition, as Kafka reads every partition on every
	// fetch. A partition the sweep must answer although no notice marked
	// it, and none follows before the session's next fetch (unnoticed.go),
	// is counted (Stats.Unnoticed) and logged: it names a missing notice.
	// Default DefaultSweepEvery; negative: never.
	SweepEvery time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log is where the cache logs (default: logrus with component
	// fetchsession); the broker passes its own, with its broker field.
	Log logrus.FieldLogger
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
	// unnoticed counts partitions a sweep answered with no change notice;
	// suspects are those not judged yet (unnoticed.go).
	unnoticed, suspects atomic.Int64
	// lastWarn is the UnixNano of the last unnoticed-change log line.
	lastWarn atomic.Int64
	// watch is the change index: the sessions holding each partition, so
	// that Changed marks a partition dirty in them without looking at any
	// other partition. Lock order: mu, then watch; Changed takes watch,
	// then a session's mu, and nothing holds a session's mu while taking
	// watch.
	watch struct {
		sync.RWMutex
		sessions map[kafka.TopicPartition]map[*session]struct{}
	}
}

// NewCache returns an empty cache.
func NewCache(cfg Config) *Cache {
	if cfg.EvictionAge <= 0 {
		cfg.EvictionAge = DefaultEvictionAge
	}
	if cfg.SweepEvery == 0 {
		cfg.SweepEvery = DefaultSweepEvery
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
	c.watch.sessions = map[kafka.TopicPartition]map[*session]struct{}{}
	return c
}

// Changed tells the cache that something a fetch of tp answers (log end,
// high watermark, last stable or log start offset, leadership, an error)
// may have changed: every session holding tp examines it in its next
// changed-only fetch, and a fetch of such a session parked now is woken.
// It is the fetch purgatory's observer (broker/purgatory); it never
// blocks for long (a map lookup and one lock per session holding tp).
func (c *Cache) Changed(tp kafka.TopicPartition) {
	c.watch.RLock()
	defer c.watch.RUnlock()
	for s := range c.watch.sessions[tp] {
		s.mu.Lock()
		if p := s.mu.parts[tp]; p != nil {
			s.noticeLocked(p)
		}
		s.mu.Unlock()
		s.signal()
	}
}

// ChangedAll is Changed for every partition of every session (shutdown,
// a wave of leadership changes).
func (c *Cache) ChangedAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.mu.sessions {
		s.mu.Lock()
		for _, p := range s.mu.parts {
			s.noticeLocked(p)
		}
		s.mu.Unlock()
		s.signal()
	}
}

// watchLocked adds s to the change index for added and removes it for
// removed (in that order); c.mu held, no session's mu.
func (c *Cache) watchLocked(s *session, added, removed []kafka.TopicPartition) {
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	c.watch.Lock()
	defer c.watch.Unlock()
	for _, tp := range added {
		ss := c.watch.sessions[tp]
		if ss == nil {
			ss = make(map[*session]struct{}, 1)
			c.watch.sessions[tp] = ss
		}
		ss[s] = struct{}{}
	}
	for _, tp := range removed {
		if ss := c.watch.sessions[tp]; ss != nil {
			delete(ss, s)
			if len(ss) == 0 {
				delete(c.watch.sessions, tp)
			}
		}
	}
}

// partitionsOf returns s's partitions (for the change index).
func partitionsOf(s *session) []kafka.TopicPartition {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]kafka.TopicPartition, 0, len(s.mu.parts))
	for tp := range s.mu.parts {
		out = append(out, tp)
	}
	return out
}

// Stats are the cache's gauges (Kafka's NumIncrementalFetchSessions,
// NumIncrementalFetchPartitionsCached, IncrementalFetchSessionEvictionsPerSec).
type Stats struct {
	Sessions   int
	Partitions int
	Evictions  int64
	// Unnoticed: partitions a sweep had to answer although no change
	// notice marked them, before the sweep or before the session's next
	// fetch (each is a missing notice; expected 0).
	Unnoticed int64
	// Suspects: partitions a sweep answered with no notice yet, judged
	// when their session's next fetch arrives.
	Suspects int64
}

// Stats returns the current gauges.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Sessions: len(c.mu.sessions), Partitions: c.mu.partitions, Evictions: c.mu.evictions,
		Unnoticed: c.unnoticed.Load(), Suspects: c.suspects.Load()}
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
	c.watchLocked(s, nil, partitionsOf(s))
	c.suspects.Add(-int64(s.dropSuspects()))
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
	s := newSession(id, privileged, now, len(parts))
	// Every partition starts dirty: what changed between the full fetch's
	// read and now reached no session, so the first changed-only fetch
	// examines them all.
	added := make([]kafka.TopicPartition, 0, len(parts))
	for _, p := range parts {
		if _, dup := s.mu.parts[p.TP]; !dup { // a partition named twice is cached once
			s.addLocked(p)
			added = append(added, p.TP)
		}
	}
	c.mu.sessions[id] = s
	c.touchLocked(s, len(s.mu.parts), now)
	c.watchLocked(s, added, nil)
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

// countUnnoticed counts n confirmed unnoticed changes and the end of
// dropped suspects (unnoticed.go); any lock may be held.
func (c *Cache) countUnnoticed(n, dropped int) {
	if n > 0 {
		c.unnoticed.Add(int64(n))
	}
	if dropped > 0 {
		c.suspects.Add(-int64(dropped))
	}
}

// reportUnnoticed logs partitions a sweep answered although no change
// notice had marked them (counted by countUnnoticed): each names a change
// of the log end, high watermark, log start or last stable offset (or an
// error) that reached no session, which a changed-only fetch would have
// left unanswered until the sweep (confirmed: no notice came before the
// session's next fetch). At most one line per 10 s.
func (c *Cache) reportUnnoticed(session int32, follower bool, changes []unnoticedChange) {
	if len(changes) == 0 {
		return
	}
	total := c.unnoticed.Load()
	now := c.cfg.Now().UnixNano()
	last := c.lastWarn.Load()
	if now-last < int64(10*time.Second) || !c.lastWarn.CompareAndSwap(last, now) {
		return
	}
	log := c.cfg.Log
	if log == nil {
		log = logrus.WithField("component", "fetchsession")
	}
	log.WithFields(logrus.Fields{"session": session, "follower_session": follower,
		"partition": changes[0].tp.String(), "change": changes[0].what, "partitions": len(changes), "total": total}).
		Warn("fetch session: a sweep answered partitions no change notice had marked (a missing notice, answered late)")
}
