package quota

import (
	"math"
	"testing"
	"time"
)

func TestQuotaRateFirstBurstSpreadOverFullWindow(t *testing.T) {
	cfg := DefaultConfig()
	var r Rate
	r.Record(cfg, 1000, 5_000)
	// One sample, 0 ms elapsed: Kafka assumes samples-1 = 10 whole windows.
	if got := r.WindowSize(cfg, 5_000); got != 10_000 {
		t.Fatalf("window size %d, want 10000", got)
	}
	if got := r.Measure(cfg, 5_000); got != 100 {
		t.Fatalf("rate %v, want 100", got)
	}
	// 12.5 s later the window is what elapsed since the oldest sample.
	r.Record(cfg, 0, 17_400)
	if got := r.WindowSize(cfg, 17_400); got < 10_000 {
		t.Fatalf("window size %d below 10 windows", got)
	}
}

func TestQuotaRateSamplesExpire(t *testing.T) {
	cfg := DefaultConfig()
	var r Rate
	for ms := int64(0); ms < 3_000; ms += 100 {
		r.Record(cfg, 100, ms)
	}
	if got := r.Measure(cfg, 3_000); got <= 0 {
		t.Fatalf("rate %v, want > 0", got)
	}
	// Every sample started 11 windows (11 s) ago or more: all are purged.
	if got := r.Measure(cfg, 3_000+11_000); got != 0 {
		t.Fatalf("rate after 11 idle windows %v, want 0", got)
	}
}

func TestQuotaRateRingReusesSamples(t *testing.T) {
	cfg := Config{Samples: 3, Window: time.Second}
	var r Rate
	for s := int64(0); s < 10; s++ {
		r.Record(cfg, 10, s*1000)
	}
	if len(r.st.samples) != 3 {
		t.Fatalf("%d samples, want 3", len(r.st.samples))
	}
	// Samples of seconds 7, 8, 9 remain: 30 over 2 s elapsed since 7 s... measured at 9.5 s
	// the oldest starts at 7 s, so the window is 2.5 s.
	if got := r.Measure(cfg, 9_500); math.Abs(got-12) > 1e-9 {
		t.Fatalf("rate %v, want 12", got)
	}
}

func TestQuotaThrottleTimeFormula(t *testing.T) {
	cases := []struct {
		observed, bound float64
		window          int64
		want            int64
	}{
		{100, 50, 2000, 2000}, // (100-50)/50*2000
		{18.2, 18.2, 10000, 0},
		{16.5, 20.4, 10000, 0},
		{150, 100, 10000, 5000},
		{100.01, 100, 10000, 1},  // 1.0 ms
		{100.004, 100, 10000, 0}, // 0.4 ms rounds to 0
	}
	for _, c := range cases {
		if got := ThrottleTime(c.observed, c.bound, c.window); got != c.want {
			t.Errorf("ThrottleTime(%v, %v, %d) = %d, want %d", c.observed, c.bound, c.window, got, c.want)
		}
	}
}

// A client that sends as fast as it may, obeying each throttle time, averages the quota.
func TestQuotaObeyingClientConvergesToBound(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewManager(Options{Now: func() time.Time { return now }})
	const bound = 1 << 20
	m.SetQuotas(Produce, Table{ClientEntity("slow"): bound})
	start, sent := now, 0.0
	for i := 0; i < 10_000 && now.Sub(start) < 60*time.Second; i++ {
		h := m.Get(Produce, "ANONYMOUS", "slow")
		const req = 256 << 10
		sent += req
		thr := h.Record(req)
		now = now.Add(time.Duration(thr)*time.Millisecond + 5*time.Millisecond)
	}
	rate := sent / now.Sub(start).Seconds()
	// The first 10 windows' worth arrives in a burst (Kafka allows it), so the long-run rate
	// sits a little above the bound.
	if rate < 0.95*bound || rate > 1.25*bound {
		t.Fatalf("long-run rate %.0f B/s, bound %d", rate, bound)
	}
}
