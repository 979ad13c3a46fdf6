package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/security/sasl"
	"samsa/broker/wire"
	"samsa/internal/testwait"
)

// TestIdleWindow: the idle fraction is computed over the time since the
// previous reading (at least minIdleWindow) and the workers, clamped.
func TestIdleWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := idleWindow{at: t0, last: 1}
	sec := int64(time.Second)
	for i, c := range []struct {
		at      time.Duration
		busy    int64
		workers int
		want    float64
	}{
		{500 * time.Millisecond, sec, 1, 1}, // too soon: the previous value
		{2 * time.Second, sec, 1, 0.5},      // 1 s busy in 2 s
		{4 * time.Second, 6 * sec, 1, 0},    // 5 s busy in 2 s: clamped
		{6 * time.Second, 8 * sec, 4, 0.75}, // 2 s busy in 2 s over 4 workers
		{8 * time.Second, 8 * sec, 1, 1},    // nothing
		{8*time.Second + 10, 9 * sec, 1, 1}, // too soon again
		{10 * time.Second, 9 * sec, 0, 0.5}, // 0 workers count as 1
	} {
		if got := w.idle(t0.Add(c.at), c.busy, c.workers); got != c.want {
			t.Errorf("reading %d: idle %v, want %v", i, got, c.want)
		}
	}
}

// gaugeValue reads an int gauge from reg; -1 when it is missing.
func gaugeValue(reg metrics.Registry, name string) int64 {
	if g, ok := reg.Get(name).(metrics.Gauge); ok {
		return g.Value()
	}
	return -1
}

func waitGauge(t *testing.T, reg metrics.Registry, name string, want int64) {
	t.Helper()
	testwait.For(t, 10*time.Second, func() error {
		if got := gaugeValue(reg, name); got != want {
			return fmt.Errorf("%s = %d, want %d", name, got, want)
		}
		return nil
	})
}

// TestServerControlPlaneMetrics: the ControlPlane gauges appear with a
// control plane listener and count its connections only: a queued acks=all
// response is in ControlPlaneResponseQueueSize, a Metadata request waiting
// behind it in ControlPlaneRequestQueueSize; the handler time shows in the
// busy counter behind ControlPlaneRequestHandlerAvgIdlePercent; the data
// plane's gauges stay at zero.
func TestServerControlPlaneMetrics(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := newPendingHandler()
	s, _, reg := startServer(t, h, nil)
	cpResp := ControlPlaneName(MetricResponseQueueSize)
	if cpResp != "kafka.network:type=RequestChannel,name=ControlPlaneResponseQueueSize" {
		t.Fatalf("ControlPlaneName: %s", cpResp)
	}
	if reg.Get(cpResp) != nil || reg.Get(MetricResponseQueueSize) == nil {
		t.Fatal("control plane gauges registered without a control plane listener, or data plane ones missing")
	}
	ctrl, err := s.ListenSecure("CONTROLLER", "127.0.0.1:0", Security{ControlPlane: true, InterBroker: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{MetricNetworkProcessorAvgIdlePercent, MetricRequestHandlerAvgIdlePercent} {
		g, ok := reg.Get(ControlPlaneName(m)).(metrics.GaugeFloat64)
		if !ok {
			t.Fatalf("%s not registered", ControlPlaneName(m))
		}
		if v := g.Value(); v < 0 || v > 1 {
			t.Fatalf("%s = %v", ControlPlaneName(m), v)
		}
	}
	if reg.Get("kafka.network:type=Acceptor,name=ControlPlaneAcceptorBlockedPercent,listener=CONTROLLER") == nil {
		t.Fatal("no ControlPlaneAcceptorBlockedPercent for the control plane listener")
	}
	c := dial(t, ctrl.String())
	first := c.send(acksAll(1))
	waitGauge(t, reg, cpResp, 1)
	meta := metadataReq(1)
	second := c.send(meta)
	waitGauge(t, reg, ControlPlaneName(MetricRequestQueueSize), 1)
	if d := gaugeValue(reg, MetricResponseQueueSize) + gaugeValue(reg, MetricRequestQueueSize); d != 0 {
		t.Fatalf("data plane queues at %d with traffic on the control plane only", d)
	}
	close(h.ch(1))
	c.recv(acksAll(1), first)
	c.recv(meta, second)
	waitGauge(t, reg, cpResp, 0)
	waitGauge(t, reg, ControlPlaneName(MetricRequestQueueSize), 0)
	if s.control.handlerBusy.Load() <= 0 || s.control.networkBusy.Load() <= 0 || s.data.handlerBusy.Load() != 0 {
		t.Fatalf("busy ns: control handler %d network %d, data handler %d", s.control.handlerBusy.Load(),
			s.control.networkBusy.Load(), s.data.handlerBusy.Load())
	}
}

// TestServerControlPlaneExpiredConnections: a connection closed because its
// SASL session expired counts in ControlPlaneExpiredConnectionsKilledCount
// on a control plane listener.
func TestServerControlPlaneExpiredConnections(t *testing.T) {
	checkNoGoroutineLeak(t)
	const lifetime = 300 * time.Millisecond
	cfg := &sasl.Config{Mechanisms: []string{sasl.Plain}, PlainUsers: map[string]string{"alice": "alice-pw"},
		MaxReceiveSize: sasl.DefaultMaxReceiveSize, ReauthAfter: lifetime}
	s, _, reg := startServer(t, principalHandler{newTestHandler()}, nil)
	addr, err := s.ListenSecure("CONTROLLER", "127.0.0.1:0", Security{SASL: cfg, ControlPlane: true})
	if err != nil {
		t.Fatal(err)
	}
	killed := ControlPlaneName(MetricExpiredConnectionsKilledCount)
	c := dial(t, addr.String())
	handshake(c, 1, "PLAIN")
	if ar := authenticate(c, 1, "\x00alice\x00alice-pw"); ar.ErrorCode != 0 {
		t.Fatalf("authenticate: %+v", ar)
	}
	authAt := time.Now()
	c.roundTrip(metadataReq(1))
	if got := gaugeValue(reg, killed); got != 0 {
		t.Fatalf("%s = %d before the session expired", killed, got)
	}
	testwait.For(t, 10*time.Second, func() error {
		if time.Since(authAt) <= lifetime+20*time.Millisecond {
			return fmt.Errorf("session not expired yet")
		}
		return nil
	})
	c.send(metadataReq(1))
	c.expectClosed()
	waitGauge(t, reg, killed, 1)
	if got := gaugeValue(reg, MetricExpiredConnectionsKilledCount); got != 0 {
		t.Fatalf("data plane %s = %d", MetricExpiredConnectionsKilledCount, got)
	}
}

// TestServerAcceptorBlockedPercent: the time an accept loop waits at
// max.connections shows in its listener's AcceptorBlockedPercent.
func TestServerAcceptorBlockedPercent(t *testing.T) {
	checkNoGoroutineLeak(t)
	_, addr, reg := startServer(t, newTestHandler(), func(o *Options) { o.MaxConnections = 1 })
	g, ok := reg.Get(MetricAcceptorBlockedPercent + "PLAINTEXT").(metrics.GaugeFloat64)
	if !ok {
		t.Fatal("no AcceptorBlockedPercent for PLAINTEXT")
	}
	if v := g.Value(); v != 0 {
		t.Fatalf("AcceptorBlockedPercent %v before any wait", v)
	}
	c1 := dial(t, addr)
	c1.roundTrip(metadataReq(1))
	c2 := dial(t, addr)
	if answered(c2, 300*time.Millisecond) {
		t.Fatal("a second connection was served at max.connections=1")
	}
	c1.conn.Close()
	served(t, c2)
	testwait.For(t, 10*time.Second, func() error {
		if v := g.Value(); v <= 0 || v > 1 {
			return fmt.Errorf("AcceptorBlockedPercent = %v after a 300 ms wait", v)
		}
		return nil
	})
}

// parkHandler waits for release in Serve and reports the wait with Parked,
// as the broker reports a long-poll fetch.
type parkHandler struct {
	*testHandler
	release chan struct{}
}

func (h parkHandler) Serve(ctx context.Context, c *Conn, req *wire.Request) (kmsg.Response, error) {
	t0 := time.Now()
	<-h.release
	c.Parked(time.Since(t0))
	return h.testHandler.Serve(ctx, c, req)
}

// TestServerParkedNotBusy: the time a handler reports as parked is left
// out of the handler busy time behind RequestHandlerAvgIdlePercent.
func TestServerParkedNotBusy(t *testing.T) {
	checkNoGoroutineLeak(t)
	h := parkHandler{testHandler: newTestHandler(), release: make(chan struct{})}
	s, addr, _ := startServer(t, h, nil)
	c := dial(t, addr)
	req := metadataReq(1)
	corr := c.send(req)
	sent := time.Now()
	testwait.For(t, 10*time.Second, func() error {
		if time.Since(sent) < 300*time.Millisecond {
			return fmt.Errorf("the handler has parked for less than 300 ms")
		}
		return nil
	})
	close(h.release)
	c.recv(req, corr)
	if busy := time.Duration(s.data.handlerBusy.Load()); busy <= 0 || busy >= 150*time.Millisecond {
		t.Fatalf("handler busy %v for a request parked over 300 ms", busy)
	}
}
