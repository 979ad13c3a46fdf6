package server

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metrics "github.com/rcrowley/go-metrics"
)

// Request plane metrics, named as Kafka 2.8's SocketServer, RequestChannel
// and KafkaRequestHandlerPool name them, for the data plane (every
// listener but the control plane one) and, once a listener with
// Security.ControlPlane is added (control.plane.listener.name), for the
// control plane with Kafka's "ControlPlane" prefix. Samsa has no network
// threads, request queue or handler pool (one goroutine per connection),
// so each gauge measures what takes their place:
//
//   - NetworkProcessorAvgIdlePercent: 1 − the time the plane's connections
//     spent decoding requests and writing responses (Kafka's processor
//     work; waiting for bytes is idle) over the wall time since the
//     previous reading (at least a second) times the workers: GOMAXPROCS
//     for the data plane, 1 for the control plane (Kafka's single
//     control-plane processor and handler thread); clamped to [0, 1].
//   - RequestHandlerAvgIdlePercent: the same with the time spent in
//     Handler.Serve less what the handler reported as parked (Conn.Parked:
//     a long-poll fetch, a group rebalance, which Kafka spends in
//     purgatories off its handler threads). Kafka exports it as a Meter
//     whose rate is this fraction; Samsa as a gauge of it. Writing to a
//     slow peer counts as network work (Kafka's processors never block on
//     one), so a data plane with slow consumers reads busier than Kafka's.
//   - RequestQueueSize: requests read and waiting to be handled (a request
//     other than Produce waits until its connection owes nothing).
//   - ResponseQueueSize: responses queued for connections' writers
//     (Pendings and the responses behind them).
//   - ExpiredConnectionsKilledCount: connections closed because their SASL
//     session expired (KIP-368, connections.max.reauth.ms).
const (
	MetricNetworkProcessorAvgIdlePercent = "kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent"
	MetricExpiredConnectionsKilledCount  = "kafka.network:type=SocketServer,name=ExpiredConnectionsKilledCount"
	MetricRequestQueueSize               = "kafka.network:type=RequestChannel,name=RequestQueueSize"
	MetricResponseQueueSize              = "kafka.network:type=RequestChannel,name=ResponseQueueSize"
	MetricRequestHandlerAvgIdlePercent   = "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent"
	// MetricAcceptorBlockedPercent, followed by the listener name, is the
	// fraction (0-1) of the time since the previous reading that the
	// listener's accept loop waited for a connection slot or the creation
	// rate (Kafka's Acceptor meter of blocked nanoseconds, whose rate is
	// this fraction; ControlPlaneAcceptorBlockedPercent for the control
	// plane listener).
	MetricAcceptorBlockedPercent = "kafka.network:type=Acceptor,name=AcceptorBlockedPercent,listener="
	// ControlPlanePrefix goes before the name= value of each metric above
	// for the control plane (Kafka's SocketServer.ControlPlaneMetricPrefix).
	ControlPlanePrefix = "ControlPlane"
)

// ControlPlaneName returns the control plane's name of a plane metric,
// for example kafka.network:type=SocketServer,name=ControlPlaneNetworkProcessorAvgIdlePercent.
func ControlPlaneName(metric string) string {
	return strings.Replace(metric, "name=", "name="+ControlPlanePrefix, 1)
}

// plane is one request plane's activity; its counters are atomics updated
// by the connection goroutines.
type plane struct {
	workers       int
	networkBusy   atomic.Int64 // nanoseconds decoding and writing
	handlerBusy   atomic.Int64 // nanoseconds in Handler.Serve
	requestQueue  atomic.Int64
	responseQueue atomic.Int64
	expiredKilled atomic.Int64
	networkIdle   idleWindow
	handlerIdle   idleWindow
	registered    sync.Once
}

func newPlane(workers int) *plane {
	now := time.Now()
	return &plane{workers: workers, networkIdle: idleWindow{at: now, last: 1}, handlerIdle: idleWindow{at: now, last: 1}}
}

// register adds p's gauges to reg under names made by name (once).
func (p *plane) register(reg metrics.Registry, name func(string) string) {
	p.registered.Do(func() {
		float := func(metric string, f func() float64) {
			_ = reg.Register(name(metric), metrics.NewFunctionalGaugeFloat64(f))
		}
		count := func(metric string, v *atomic.Int64) {
			_ = reg.Register(name(metric), metrics.NewFunctionalGauge(v.Load))
		}
		float(MetricNetworkProcessorAvgIdlePercent, func() float64 { return p.networkIdle.idle(time.Now(), p.networkBusy.Load(), p.workers) })
		float(MetricRequestHandlerAvgIdlePercent, func() float64 { return p.handlerIdle.idle(time.Now(), p.handlerBusy.Load(), p.workers) })
		count(MetricRequestQueueSize, &p.requestQueue)
		count(MetricResponseQueueSize, &p.responseQueue)
		count(MetricExpiredConnectionsKilledCount, &p.expiredKilled)
	})
}

// idleWindow turns a busy-time counter into an idle fraction over the time
// between two readings.
type idleWindow struct {
	mu   sync.Mutex
	at   time.Time // guarded by mu; the previous reading
	busy int64     // guarded by mu; the counter at the previous reading
	last float64   // guarded by mu; the fraction computed then
}

// minIdleWindow is the shortest window a reading is computed over; a
// reading sooner than that after the previous one repeats its value.
const minIdleWindow = time.Second

// idle returns 1 − (busy − the busy at the previous reading) / (the time
// since then × workers), clamped to [0, 1].
func (w *idleWindow) idle(now time.Time, busy int64, workers int) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	el := now.Sub(w.at)
	if el < minIdleWindow {
		return w.last
	}
	frac := float64(busy-w.busy) / (float64(el) * float64(max(workers, 1)))
	w.last = min(max(1-frac, 0), 1)
	w.at, w.busy = now, busy
	return w.last
}

// newPlanes returns a server's data and control planes and registers the
// data plane's gauges.
func newPlanes(reg metrics.Registry) (data, control *plane) {
	data, control = newPlane(runtime.GOMAXPROCS(0)), newPlane(1)
	data.register(reg, func(m string) string { return m })
	return data, control
}

// registerAcceptorBlocked registers l's AcceptorBlockedPercent gauge.
func (s *Server) registerAcceptorBlocked(l *listener) {
	name := MetricAcceptorBlockedPercent + l.name
	if l.sec.ControlPlane {
		name = ControlPlaneName(name)
	}
	_ = s.opts.Metrics.Register(name, metrics.NewFunctionalGaugeFloat64(func() float64 {
		return 1 - l.blockedWindow.idle(time.Now(), l.blocked.Load(), 1)
	}))
}
