package replica

import (
	"math"
	"slices"
	"sync"
	"time"

	"samsa/kafka"
)

// Throttle is one direction of Kafka's replication quota
// (ReplicationQuotaManager): a byte rate (leader.replication.throttled.rate
// or follower.replication.throttled.rate of this broker) and the partitions
// it applies to (the topics' leader/follower.replication.throttled.replicas
// entries naming this broker). It is a token bucket holding at most one
// second of the rate: while the bucket is empty the quota is exceeded and
// throttled replicas get no data (leader side: empty fetch answers; follower
// side: the partitions are left out of the next fetch). Bytes are recorded
// after they were sent or received, so the bucket may go below zero by one
// response; the long-run rate stays at the configured one.
//
// As in Kafka, only replicas outside the ISR are throttled (a reassignment's
// new replicas while they catch up), never in-sync followers.
//
// Safe for concurrent use.
type Throttle struct {
	now func() time.Time

	mu struct {
		sync.Mutex
		rate   int64 // bytes per second; <= 0: unlimited
		tokens float64
		last   time.Time
		// parts holds the throttled partitions per topic; all[topic]
		// marks "*" (every partition).
		parts map[string][]int32
		all   map[string]bool
	}
}

// NewThrottle returns an unlimited Throttle with no throttled partitions;
// now nil means time.Now.
func NewThrottle(now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	t := &Throttle{now: now}
	t.mu.parts = map[string][]int32{}
	t.mu.all = map[string]bool{}
	return t
}

// SetRate sets the byte rate; <= 0 removes the limit.
func (t *Throttle) SetRate(bytesPerSec int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if bytesPerSec == t.mu.rate {
		return
	}
	t.mu.rate = bytesPerSec
	t.mu.tokens = float64(max(bytesPerSec, 0))
	t.mu.last = t.now()
}

// Rate returns the byte rate (<= 0: unlimited).
func (t *Throttle) Rate() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.rate
}

// SetPartitions replaces the throttled partitions of topic: all means "*".
func (t *Throttle) SetPartitions(topic string, partitions []int32, all bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mu.parts, topic)
	delete(t.mu.all, topic)
	if all {
		t.mu.all[topic] = true
	} else if len(partitions) > 0 {
		t.mu.parts[topic] = slices.Clone(partitions)
	}
}

// IsThrottled reports whether tp is throttled (a rate is set and tp is
// listed).
func (t *Throttle) IsThrottled(tp kafka.TopicPartition) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.rate <= 0 {
		return false
	}
	return t.mu.all[tp.Topic] || slices.Contains(t.mu.parts[tp.Topic], tp.Partition)
}

// refillLocked adds the tokens earned since the last call.
func (t *Throttle) refillLocked() {
	now := t.now()
	if el := now.Sub(t.mu.last).Seconds(); el > 0 {
		t.mu.tokens = math.Min(float64(t.mu.rate), t.mu.tokens+el*float64(t.mu.rate))
	}
	t.mu.last = now
}

// Available returns how many bytes may be sent now: 0 when the quota is
// exceeded, math.MaxInt32 without a rate.
func (t *Throttle) Available() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.rate <= 0 {
		return math.MaxInt32
	}
	t.refillLocked()
	if t.mu.tokens < 1 {
		return 0
	}
	return int(math.Min(t.mu.tokens, math.MaxInt32))
}

// Record takes n bytes from the bucket.
func (t *Throttle) Record(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.rate <= 0 || n <= 0 {
		return
	}
	t.refillLocked()
	t.mu.tokens -= float64(n)
}

// Delay returns how long until the bucket has tokens again (0 if it has).
func (t *Throttle) Delay() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.rate <= 0 {
		return 0
	}
	t.refillLocked()
	if t.mu.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - t.mu.tokens) / float64(t.mu.rate) * float64(time.Second))
}

// LeaderThrottled reports whether a fetch by follower for tp is subject to
// the leader-side throttle: tp is throttled and follower is not in the ISR.
func (m *Manager) LeaderThrottled(tp kafka.TopicPartition, follower int32) bool {
	if follower < 0 || !m.LeaderThrottle.IsThrottled(tp) {
		return false
	}
	p := m.Partition(tp)
	if p == nil {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return !slices.Contains(p.mu.isr, follower)
}

// followerThrottled reports whether this broker's fetches of p are subject
// to the follower-side throttle: p is throttled and this replica is not in
// the ISR.
func (m *Manager) followerThrottled(p *Partition) bool {
	if !m.FollowerThrottle.IsThrottled(p.tp) {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return !slices.Contains(p.mu.isr, m.cfg.BrokerID)
}
