package quota

import "math"

// tokenBucket is Kafka's TokenBucket stat (KIP-599), the measure of controller_mutation_rate:
// the bound is the refill rate in tokens per second and the burst, the most the bucket holds,
// is samples × window seconds × bound. A record takes its value out of the bucket, which may
// go negative; the quota is exhausted while the bucket is below zero. The zero value is a
// bucket last refilled at the epoch, so its first use finds it full. Not safe for concurrent
// use (Sensor locks it).
type tokenBucket struct {
	tokens     float64
	lastUpdate int64 // ms
}

func burst(cfg Config, bound float64) float64 {
	return float64(cfg.samples()) * cfg.Window.Seconds() * bound
}

func (b *tokenBucket) refill(cfg Config, bound float64, now int64) {
	b.tokens = math.Min(burst(cfg, bound), b.tokens+bound*float64(now-b.lastUpdate)/1000)
	b.lastUpdate = now
}

// measure returns the tokens left at now.
func (b *tokenBucket) measure(cfg Config, bound float64, now int64) float64 {
	b.refill(cfg, bound, now)
	return b.tokens
}

// record takes v tokens out at now.
func (b *tokenBucket) record(cfg Config, bound, v float64, now int64) {
	b.refill(cfg, bound, now)
	b.tokens = math.Min(burst(cfg, bound), b.tokens-v)
}

// bucketThrottleTime is Kafka's ControllerMutationQuotaManager.throttleTimeMs: the time for an
// exhausted bucket (tokens < 0) to refill to zero, -tokens / bound seconds, rounded to whole
// milliseconds as Java's Math.round.
func bucketThrottleTime(tokens, bound float64) int64 {
	if tokens >= 0 || bound <= 0 {
		return 0
	}
	x := math.Floor(-tokens/bound*1000 + 0.5)
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}
