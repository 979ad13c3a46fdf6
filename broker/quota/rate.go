package quota

import (
	"math"
	"time"
)

// Config is the sampling of a quota rate: Kafka's quota.window.num and
// quota.window.size.seconds.
type Config struct {
	Samples int           // quota.window.num (Kafka default 11)
	Window  time.Duration // quota.window.size.seconds (Kafka default 1 s)
}

// DefaultConfig returns Kafka 2.8's defaults: 11 samples of 1 s ("10 whole windows + 1
// current window").
func DefaultConfig() Config { return Config{Samples: 11, Window: time.Second} }

func (c Config) windowMs() int64 { return max(c.Window.Milliseconds(), 1) }

func (c Config) samples() int { return max(c.Samples, 1) }

// sample is one window of a sampledStat (Kafka's SampledStat.Sample).
type sample struct {
	start  int64 // ms; Kafka's lastWindowMs: when the window began
	value  float64
	events int64
}

// sampledStat is Kafka 2.8's SampledStat: a ring of at most cfg.Samples samples. A sample is
// complete once cfg.Window has passed since its start; the next record then starts the next
// sample in the ring (resetting the oldest one). Samples whose start is cfg.Samples windows
// old are reset before every measurement (purgeObsoleteSamples). Not safe for concurrent use.
type sampledStat struct {
	samples []sample
	current int
}

func (s *sampledStat) cur(cfg Config, now int64) *sample {
	if len(s.samples) == 0 {
		s.samples = make([]sample, 1, cfg.samples())
		s.samples[0] = sample{start: now}
	}
	return &s.samples[s.current]
}

func (s *sampledStat) record(cfg Config, v float64, now int64) {
	smp := s.cur(cfg, now)
	if now-smp.start >= cfg.windowMs() {
		s.current = (s.current + 1) % cfg.samples()
		if s.current >= len(s.samples) {
			s.samples = append(s.samples, sample{start: now})
		} else {
			s.samples[s.current] = sample{start: now}
		}
		smp = &s.samples[s.current]
	}
	smp.value += v
	smp.events++
}

// purge resets the samples that started cfg.Samples windows ago or earlier.
func (s *sampledStat) purge(cfg Config, now int64) {
	expire := int64(cfg.samples()) * cfg.windowMs()
	for i := range s.samples {
		if now-s.samples[i].start >= expire {
			s.samples[i] = sample{start: now}
		}
	}
}

// oldest returns the start of the oldest sample.
func (s *sampledStat) oldest(cfg Config, now int64) int64 {
	s.cur(cfg, now)
	o := s.samples[0].start
	for _, smp := range s.samples[1:] {
		o = min(o, smp.start)
	}
	return o
}

// totals purges and returns the sum of the values and the number of events.
func (s *sampledStat) totals(cfg Config, now int64) (sum float64, events int64) {
	s.purge(cfg, now)
	for _, smp := range s.samples {
		sum += smp.value
		events += smp.events
	}
	return sum, events
}

// Rate is Kafka 2.8's Rate over a windowed sum, in units per second. The zero value is
// ready; it is not safe for concurrent use (Sensor locks it).
type Rate struct{ st sampledStat }

// Record adds v at time now (milliseconds).
func (r *Rate) Record(cfg Config, v float64, now int64) { r.st.record(cfg, v, now) }

// WindowSize is the time the rate is measured over, in milliseconds (Kafka's
// Rate.windowSize): from the start of the oldest live sample to now, but at least
// cfg.Samples-1 whole windows, so a client's first burst is spread over the full window
// instead of the few milliseconds it took.
func (r *Rate) WindowSize(cfg Config, now int64) int64 {
	r.st.purge(cfg, now)
	elapsed := now - r.st.oldest(cfg, now)
	w := cfg.windowMs()
	full := elapsed / w
	if minFull := int64(cfg.samples() - 1); full < minFull {
		elapsed += (minFull - full) * w
	}
	return elapsed
}

// Measure returns the rate at now, per second.
func (r *Rate) Measure(cfg Config, now int64) float64 {
	sum, _ := r.st.totals(cfg, now)
	return sum / (float64(r.WindowSize(cfg, now)) / 1000)
}

// ThrottleTime is Kafka's throttle time (QuotaUtils.throttleTime): how long, in
// milliseconds, no more may be recorded for the observed rate to fall back to the bound over
// a window of windowMs: O*W/(W+X) = T gives X = (O-T)/T*W, rounded as Java's Math.round. It
// is not capped (Kafka bounds only request_percentage and connection-rate throttles, to one
// window); the caller clamps it to an int32 throttle_time_ms. Zero or less means within
// quota.
func ThrottleTime(observed, bound float64, windowMs int64) int64 {
	if bound <= 0 || observed <= bound {
		return 0
	}
	x := math.Floor((observed-bound)/bound*float64(windowMs) + 0.5)
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}

// avg is Kafka's Avg over a SampledStat (the throttle-time metric, which Kafka measures with
// the default MetricConfig: 2 samples of 30 s). Not safe for concurrent use.
type avg struct{ st sampledStat }

var avgConfig = Config{Samples: 2, Window: 30 * time.Second}

func (a *avg) record(v float64, now int64) { a.st.record(avgConfig, v, now) }

func (a *avg) measure(now int64) float64 {
	sum, n := a.st.totals(avgConfig, now)
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
