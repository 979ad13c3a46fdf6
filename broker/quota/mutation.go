package quota

import (
	"errors"
	"math"
)

// ErrThrottled is a strict Mutation's refusal: the entity's bucket is exhausted (Kafka's
// ThrottlingQuotaExceededException, THROTTLING_QUOTA_EXCEEDED). Mutation.ThrottleTime says
// for how long.
var ErrThrottled = errors.New("quota: the throttling quota has been exceeded")

// Mutation is one request's controller mutation quota (Kafka's ControllerMutationQuota):
// CreateTopics, CreatePartitions and DeleteTopics record the partitions each topic creates or
// deletes through it. Strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+) refuses
// a topic while the bucket is below zero and otherwise accepts it whole, whatever it takes,
// so one request may drive the bucket negative; permissive (older versions) accepts every
// topic and only reports a throttle time once the bucket is below zero. A nil *Mutation is
// unbounded (no controller_mutation_rate configured): Record accepts, ThrottleTime is 0.
// A Mutation belongs to one request and is not safe for concurrent use.
type Mutation struct {
	h              Handle
	strict         bool
	now            func() int64
	lastThrottleMs int64
	lastRecordedMs int64
}

// NewMutation returns the controller mutation quota of a request by (sanitized user, client
// id), strict or permissive, or nil when no controller_mutation_rate is configured.
func (m *Manager) NewMutation(user, client string, strict bool) *Mutation {
	h := m.Get(ControllerMutation, user, client)
	if !h.Active() {
		return nil
	}
	return &Mutation{h: h, strict: strict, now: m.nowMs}
}

// Strict reports whether q refuses mutations over the quota (false for nil).
func (q *Mutation) Strict() bool { return q != nil && q.strict }

// Record takes permits (partitions) out of the entity's bucket. Strict: ErrThrottled, and
// nothing taken, when the bucket is already below zero (Sensor.checkQuotas before
// record(…, false)); permissive: always taken, the throttle time updated when the bucket
// ends below zero.
func (q *Mutation) Record(permits float64) error {
	if q == nil {
		return nil
	}
	s := q.h.s
	bound := q.h.bound
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.bound = bound
	if bound >= Unlimited {
		s.rate.Record(s.cfg, permits, now)
		return nil
	}
	if q.strict {
		if tokens := s.bucket.measure(s.cfg, bound, now); tokens < 0 {
			q.throttledAt(bucketThrottleTime(tokens, bound), now)
			s.throttle.record(float64(q.lastThrottleMs), now)
			return ErrThrottled
		}
		s.bucket.record(s.cfg, bound, permits, now)
		s.rate.Record(s.cfg, permits, now)
		return nil
	}
	s.bucket.record(s.cfg, bound, permits, now)
	s.rate.Record(s.cfg, permits, now)
	if tokens := s.bucket.measure(s.cfg, bound, now); tokens < 0 {
		q.throttledAt(bucketThrottleTime(tokens, bound), now)
		s.throttle.record(float64(q.lastThrottleMs), now)
	}
	return nil
}

func (q *Mutation) throttledAt(ms, now int64) {
	q.lastThrottleMs, q.lastRecordedMs = ms, now
}

// ThrottleTime returns the request's throttle time in milliseconds: the last one recorded,
// less the time since (the answer may be sent well after the refusal, once the request waited
// for its topics' leaders), never below zero.
func (q *Mutation) ThrottleTime() int64 {
	if q == nil || q.lastThrottleMs <= 0 {
		return 0
	}
	return max(0, q.lastThrottleMs-(q.now()-q.lastRecordedMs))
}

// Tokens returns the tokens left in the sensor's bucket (Kafka's "tokens" metric of
// ControllerMutation), +Inf before any mutation was recorded against a bound.
func (s *Sensor) Tokens() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bound <= 0 || s.bound >= Unlimited {
		return math.Inf(1)
	}
	return s.bucket.measure(s.cfg, s.bound, s.now())
}
