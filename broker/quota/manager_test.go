package quota

import (
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestQuotaManagerDisabledUntilConfigured(t *testing.T) {
	m := NewManager(Options{})
	if m.AnyEnabled() || m.Get(Produce, "ANONYMOUS", "c").Active() {
		t.Fatal("enabled without quotas")
	}
	m.SetQuotas(Fetch, Table{DefaultClientEntity: 10})
	if !m.AnyEnabled() || !m.Enabled(Fetch) || m.Enabled(Produce) {
		t.Fatalf("enabled kinds wrong: fetch %v produce %v", m.Enabled(Fetch), m.Enabled(Produce))
	}
	// Every client gets its own rate under a client-id default.
	m.Get(Fetch, "ANONYMOUS", "a").Record(1)
	m.Get(Fetch, "ANONYMOUS", "b").Record(1)
	if n := m.Sensors(Fetch); n != 2 {
		t.Fatalf("%d sensors, want 2", n)
	}
	m.SetQuotas(Fetch, nil)
	if m.AnyEnabled() || m.Get(Fetch, "ANONYMOUS", "a").Active() {
		t.Fatal("still enabled after removing every quota")
	}
}

func TestQuotaManagerThrottleAndUnrecord(t *testing.T) {
	c := &clock{now: time.Unix(100, 0)}
	m := NewManager(Options{Now: c.Now})
	m.SetQuotas(Fetch, Table{ClientEntity("c"): 100})
	h := m.Get(Fetch, "ANONYMOUS", "c")
	if h.Bound() != 100 || h.MaxValueInWindow() != 1000 {
		t.Fatalf("bound %v max %v", h.Bound(), h.MaxValueInWindow())
	}
	if thr := h.Record(1000); thr != 0 {
		t.Fatalf("1000 B over 10 s at 100 B/s throttled %d ms", thr)
	}
	// 2000 B over a 10 s window is 200 B/s: (200-100)/100*10 s = 10 s.
	thr := h.Record(1000)
	if thr != 10_000 {
		t.Fatalf("throttle %d ms, want 10000", thr)
	}
	h.Unrecord(1000)
	h.Throttled(thr)
	if thr := h.Record(0); thr != 0 {
		t.Fatalf("after unrecord still throttled %d ms", thr)
	}
	s := m.kinds[Fetch].sensors[Tags{Client: "c"}]
	if got := s.ThrottleTime(); got != 10_000 {
		t.Fatalf("throttle-time %v", got)
	}
	if got := s.ByteRate(); got != 100 {
		t.Fatalf("byte-rate %v, want 100", got)
	}
	// A quota change applies to the next request, on the same rate.
	m.SetQuotas(Fetch, Table{ClientEntity("c"): 1000})
	if thr := m.Get(Fetch, "ANONYMOUS", "c").Record(1000); thr != 0 {
		t.Fatalf("raised quota still throttles %d ms", thr)
	}
}

func TestQuotaManagerSensorsExpire(t *testing.T) {
	c := &clock{now: time.Unix(100, 0)}
	var added, removed []Tags
	m := NewManager(Options{Now: c.Now,
		SensorAdded:   func(_ Kind, tg Tags, _ *Sensor) { added = append(added, tg) },
		SensorRemoved: func(_ Kind, tg Tags) { removed = append(removed, tg) }})
	m.SetQuotas(Produce, Table{DefaultClientEntity: 10})
	m.Get(Produce, "ANONYMOUS", "old").Record(1)
	c.Add(30 * time.Minute)
	m.Get(Produce, "ANONYMOUS", "mid").Record(1)
	c.Add(31 * time.Minute)
	m.Get(Produce, "ANONYMOUS", "new").Record(1) // "old" is idle for an hour: dropped
	if len(added) != 3 || len(removed) != 1 || removed[0] != (Tags{Client: "old"}) {
		t.Fatalf("added %v removed %v", added, removed)
	}
	if n := m.Sensors(Produce); n != 2 {
		t.Fatalf("%d sensors, want 2", n)
	}
}

func TestQuotaManagerConcurrent(t *testing.T) {
	m := NewManager(Options{})
	m.SetQuotas(Produce, Table{DefaultClientEntity: 1 << 20})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				h := m.Get(Produce, "ANONYMOUS", []string{"a", "b", "c"}[i%3])
				if thr := h.Record(512); thr > 0 {
					h.Throttled(thr)
				}
				if i%500 == 0 {
					m.SetQuotas(Produce, Table{DefaultClientEntity: float64(1<<20 + i)})
				}
			}
		}()
	}
	wg.Wait()
	if n := m.Sensors(Produce); n != 3 {
		t.Fatalf("%d sensors, want 3", n)
	}
}

// The static client quota applies below every dynamic entity and enables its kind alone.
func TestQuotaManagerStaticClientQuota(t *testing.T) {
	m := NewManager(Options{StaticClientQuota: map[Kind]float64{Produce: 500}})
	if !m.Enabled(Produce) || m.Enabled(Fetch) {
		t.Fatal("static produce quota does not enable exactly produce")
	}
	if h := m.Get(Produce, "ANONYMOUS", "x"); h.Bound() != 500 {
		t.Fatalf("bound %v, want the static 500", h.Bound())
	}
	m.SetQuotas(Produce, Table{DefaultUserEntity: 7})
	if h := m.Get(Produce, "ANONYMOUS", "x"); h.Bound() != 7 {
		t.Fatalf("bound %v, want the user default 7", h.Bound())
	}
	m.SetQuotas(Produce, nil)
	if !m.Enabled(Produce) {
		t.Fatal("removing dynamic quotas disabled the static one")
	}
}
