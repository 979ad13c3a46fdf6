package quota

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is a client quota type.
type Kind int

// The client quota kinds (Kafka's QuotaType).
const (
	Produce Kind = iota // producer_byte_rate: request bytes of Produce
	Fetch               // consumer_byte_rate: response bytes of consumer Fetch
	// Request is request_percentage (Kafka's ClientRequestQuotaManager): the handler and
	// network time of every request, in percent of one thread per second. Its throttle time is
	// capped at one quota window.
	Request
	// ControllerMutation is controller_mutation_rate (KIP-599): partitions created or deleted
	// per second, measured with a token bucket over controller.quota.window.* (see Mutation).
	ControllerMutation
	numKinds
)

// String returns Kafka's name of the quota type (the "type" of its metrics).
func (k Kind) String() string {
	switch k {
	case Produce:
		return "Produce"
	case Fetch:
		return "Fetch"
	case Request:
		return "Request"
	}
	return "ControllerMutation"
}

// Kafka drops a client's sensors after an hour without requests
// (InactiveSensorExpirationTimeSeconds); Samsa checks for idle ones at most once a minute.
const (
	sensorExpiry  = time.Hour
	sweepInterval = time.Minute
)

// Options configure a Manager.
type Options struct {
	Config Config // sampling of Produce, Fetch and Request; zero: DefaultConfig
	// ControllerConfig is the sampling of ControllerMutation (Kafka's
	// controller.quota.window.num and controller.quota.window.size.seconds); zero:
	// DefaultConfig.
	ControllerConfig Config
	Now              func() time.Time // clock; nil: time.Now
	// StaticClientQuota is, per Kind, the bound of a client-id no configured entity matches
	// (Kafka's deprecated quota.producer.default and quota.consumer.default); absent or
	// Unlimited: none. A static quota enables its kind from the start.
	StaticClientQuota map[Kind]float64
	// SensorAdded and SensorRemoved, when set, are told when a sensor is created and when
	// it expires (to register and unregister its metrics). They run with the Manager's
	// lock held and must not call back into it.
	SensorAdded   func(k Kind, t Tags, s *Sensor)
	SensorRemoved func(k Kind, t Tags)
}

// Manager holds the configured quotas and the per-entity sensors of both kinds.
type Manager struct {
	opts   Options
	active atomic.Uint32 // bit per Kind whose Table is not empty
	kinds  [numKinds]kindState
	exempt exemptState
}

type kindState struct {
	cfg       Config                // immutable after NewManager
	capMs     int64                 // immutable; throttle cap in ms, 0: none
	static    float64               // immutable after NewManager
	table     atomic.Pointer[Table] // immutable once stored
	mu        sync.RWMutex
	sensors   map[Tags]*Sensor // guarded by mu
	lastSweep int64            // guarded by mu (write); ms
}

// NewManager returns a Manager with no quotas configured.
func NewManager(opts Options) *Manager {
	if opts.Config.Samples <= 0 || opts.Config.Window <= 0 {
		opts.Config = DefaultConfig()
	}
	if opts.ControllerConfig.Samples <= 0 || opts.ControllerConfig.Window <= 0 {
		opts.ControllerConfig = DefaultConfig()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Manager{opts: opts}
	for i := range m.kinds {
		ks := &m.kinds[i]
		ks.cfg = opts.Config
		if Kind(i) == ControllerMutation {
			ks.cfg = opts.ControllerConfig
		}
		if Kind(i) == Request {
			// ClientRequestQuotaManager.maxThrottleTimeMs: one quota window.
			ks.capMs = max(ks.cfg.Window.Milliseconds(), 1)
		}
		ks.sensors = make(map[Tags]*Sensor)
		ks.static = Unlimited
		if q, ok := opts.StaticClientQuota[Kind(i)]; ok && q > 0 && q < Unlimited {
			ks.static = q
			m.active.Store(m.active.Load() | 1<<i)
		}
	}
	return m
}

// Config returns the Manager's sampling of Produce, Fetch and Request.
func (m *Manager) Config() Config { return m.opts.Config }

// SetQuotas replaces the configured entities of kind k (a quota change takes effect with the
// next request). An empty or nil t disables the kind (requests are no longer recorded) unless
// it has a static client quota.
func (m *Manager) SetQuotas(k Kind, t Table) {
	ks := &m.kinds[k]
	ks.table.Store(&t)
	for {
		old := m.active.Load()
		nw := old &^ (1 << k)
		if len(t) > 0 || ks.static < Unlimited {
			nw |= 1 << k
		}
		if m.active.CompareAndSwap(old, nw) {
			return
		}
	}
}

// Quotas returns the configured entities of kind k (not to be modified).
func (m *Manager) Quotas(k Kind) Table {
	if p := m.kinds[k].table.Load(); p != nil {
		return *p
	}
	return nil
}

// Enabled reports whether any quota of kind k is configured: one atomic load.
func (m *Manager) Enabled(k Kind) bool { return m.active.Load()&(1<<k) != 0 }

// AnyEnabled reports whether any quota of any kind is configured: one atomic load.
func (m *Manager) AnyEnabled() bool { return m.active.Load() != 0 }

func (m *Manager) nowMs() int64 { return m.opts.Now().UnixMilli() }

// Get returns the Handle of a request by (sanitized user, client id) for kind k, or the zero
// Handle (Active false) when no quota of that kind is configured. While quotas of the kind
// exist every client is recorded, also one no entity matches (its bound is Unlimited), as
// Kafka does.
func (m *Manager) Get(k Kind, user, client string) Handle {
	if !m.Enabled(k) {
		return Handle{}
	}
	tags, bound := resolve(m.Quotas(k), m.kinds[k].static, user, client)
	return Handle{s: m.sensor(k, tags), bound: bound}
}

func (m *Manager) sensor(k Kind, tags Tags) *Sensor {
	ks := &m.kinds[k]
	now := m.nowMs()
	ks.mu.RLock()
	s := ks.sensors[tags]
	ks.mu.RUnlock()
	if s != nil {
		s.lastUsed.Store(now)
		return s
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if s = ks.sensors[tags]; s == nil {
		m.sweepLocked(k, now)
		s = &Sensor{kind: k, cfg: ks.cfg, capMs: ks.capMs, now: m.nowMs}
		ks.sensors[tags] = s
		if m.opts.SensorAdded != nil {
			m.opts.SensorAdded(k, tags, s)
		}
	}
	s.lastUsed.Store(now)
	return s
}

// sweepLocked drops the sensors of kind k idle for sensorExpiry, at most once per
// sweepInterval; ks.mu is held for writing.
func (m *Manager) sweepLocked(k Kind, now int64) {
	ks := &m.kinds[k]
	if now-ks.lastSweep < sweepInterval.Milliseconds() {
		return
	}
	ks.lastSweep = now
	for tags, s := range ks.sensors {
		if now-s.lastUsed.Load() >= sensorExpiry.Milliseconds() {
			delete(ks.sensors, tags)
			if m.opts.SensorRemoved != nil {
				m.opts.SensorRemoved(k, tags)
			}
		}
	}
}

// Sensors returns the number of live sensors of kind k (for tests and metrics).
func (m *Manager) Sensors(k Kind) int {
	ks := &m.kinds[k]
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	return len(ks.sensors)
}

// Sensor is the rate of one quota entity (Kafka's quota sensor with its byte-rate metric)
// and the average of the throttle times given to it (throttle-time).
type Sensor struct {
	kind     Kind
	cfg      Config
	capMs    int64
	now      func() int64
	lastUsed atomic.Int64 // ms
	mu       sync.Mutex
	rate     Rate        // guarded by mu
	throttle avg         // guarded by mu
	bucket   tokenBucket // guarded by mu; ControllerMutation only
	bound    float64     // guarded by mu; ControllerMutation: the bound last used
}

// ByteRate returns the measured rate per second (Kafka's byte-rate metric; for Request the
// request-time percentage, for ControllerMutation the mutation-rate).
func (s *Sensor) ByteRate() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rate.Measure(s.cfg, s.now())
}

// ThrottleTime returns the average throttle time in milliseconds given over the last
// minute (Kafka's throttle-time metric), 0 when none was given.
func (s *Sensor) ThrottleTime() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.throttle.measure(s.now())
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// Handle is a request's sensor and bound. The zero Handle is inactive and its methods do
// nothing.
type Handle struct {
	s     *Sensor
	bound float64
}

// Active reports whether the request is recorded (a quota of its kind is configured).
func (h Handle) Active() bool { return h.s != nil }

// Bound returns the request's quota in bytes per second (Unlimited when no entity matches).
func (h Handle) Bound() float64 { return h.bound }

// Record adds value (bytes) to the rate and returns the throttle time in milliseconds
// (Kafka's recordAndGetThrottleTimeMs): 0 while the rate, measured with value included, is
// within the bound; otherwise the time for it to fall back to the bound. The value stays
// recorded either way (Unrecord takes it back).
func (h Handle) Record(value float64) int64 {
	if h.s == nil {
		return 0
	}
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.rate.Record(s.cfg, value, now)
	observed := s.rate.Measure(s.cfg, now)
	if observed <= h.bound {
		return 0
	}
	ms := ThrottleTime(observed, h.bound, s.rate.WindowSize(s.cfg, now))
	if s.capMs > 0 {
		ms = min(ms, s.capMs) // Request: QuotaUtils.boundedThrottleTime
	}
	return ms
}

// RecordNoThrottle adds value to the rate without asking for a throttle time (Kafka's
// recordNoThrottle: a request's network time counts towards the next requests' throttle).
func (h Handle) RecordNoThrottle(value float64) {
	if h.s == nil {
		return
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.rate.Record(h.s.cfg, value, h.s.now())
}

// Unrecord takes value back out of the rate (Kafka's unrecordQuotaSensor: a throttled fetch
// returns no data, so its bytes do not count).
func (h Handle) Unrecord(value float64) {
	if h.s == nil {
		return
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.rate.Record(h.s.cfg, -value, h.s.now())
}

// Throttled records a throttle time given to the request (the throttle-time metric).
func (h Handle) Throttled(ms int64) {
	if h.s == nil || ms <= 0 {
		return
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.throttle.record(float64(ms), h.s.now())
}

// MaxValueInWindow is the most that can be recorded at once without a certain throttle
// (Kafka's getMaxValueInQuotaWindow): bound × (samples-1) × window seconds. Kafka caps a
// consumer's fetch max_bytes to it. math.MaxFloat64 for an inactive Handle.
func (h Handle) MaxValueInWindow() float64 {
	if h.s == nil || h.bound >= Unlimited {
		return math.MaxFloat64
	}
	return h.bound * float64(h.s.cfg.samples()-1) * h.s.cfg.Window.Seconds()
}

// exemptState is the exempt-request-time sensor of Request (Kafka's exempt-Request sensor):
// the time of inter-broker requests, measured but never throttled.
type exemptState struct {
	mu   sync.Mutex
	rate Rate // guarded by mu
}

// RecordExempt adds value (percent, as Request records) to the exempt-request-time rate, when
// request_percentage quotas are enabled.
func (m *Manager) RecordExempt(value float64) {
	if !m.Enabled(Request) {
		return
	}
	m.exempt.mu.Lock()
	defer m.exempt.mu.Unlock()
	m.exempt.rate.Record(m.opts.Config, value, m.nowMs())
}

// ExemptRequestTime returns the exempt-request-time rate (percent).
func (m *Manager) ExemptRequestTime() float64 {
	m.exempt.mu.Lock()
	defer m.exempt.mu.Unlock()
	return m.exempt.rate.Measure(m.opts.Config, m.nowMs())
}

// NanosToPercent converts a request's time to the unit Request records (Kafka's
// NanosToPercentagePerSecond): percent of one thread for one second.
func NanosToPercent(nanos int64) float64 { return float64(nanos) * 100 / 1e9 }
