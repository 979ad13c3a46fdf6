package quota

import (
	"errors"
	"testing"
	"time"
)

func TestQuotaMutationStrictTokenBucket(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	m := NewManager(Options{Now: c.Now, ControllerConfig: Config{Samples: 10, Window: time.Second}})
	if q := m.NewMutation("alice", "c", true); q != nil {
		t.Fatal("a mutation quota without controller_mutation_rate configured")
	}
	// 2 partitions/s over 10 windows of 1 s: a burst of 20.
	m.SetQuotas(ControllerMutation, Table{UserEntity("alice"): 2})
	q := m.NewMutation("alice", "c", true)
	if err := q.Record(15); err != nil {
		t.Fatalf("first 15 of a 20 burst refused: %v", err)
	}
	// 5 tokens left: a topic of 30 partitions is accepted whole (the bucket goes to -25).
	if err := q.Record(30); err != nil {
		t.Fatalf("30 with 5 tokens left refused: %v", err)
	}
	if q.ThrottleTime() != 0 {
		t.Fatalf("strict quota throttles before refusing: %d", q.ThrottleTime())
	}
	// Now exhausted: refused, nothing taken; -25 tokens at 2/s is 12.5 s.
	if err := q.Record(1); !errors.Is(err, ErrThrottled) {
		t.Fatalf("exhausted bucket accepted: %v", err)
	}
	if got := q.ThrottleTime(); got != 12_500 {
		t.Fatalf("throttle %d ms, want 12500", got)
	}
	c.Add(2500 * time.Millisecond)
	if got := q.ThrottleTime(); got != 10_000 {
		t.Fatalf("throttle after 2.5 s %d ms, want 10000", got)
	}
	// Another client of the same user shares the user's bucket: -20 tokens now.
	q2 := m.NewMutation("alice", "other", true)
	if err := q2.Record(1); !errors.Is(err, ErrThrottled) {
		t.Fatalf("user bucket not shared: %v", err)
	}
	c.Add(10 * time.Second) // refilled to 0
	if err := m.NewMutation("alice", "c", true).Record(1); err != nil {
		t.Fatalf("refilled bucket refused: %v", err)
	}
	// The burst caps the refill: after a long pause at most 20 are available at once.
	c.Add(time.Hour)
	q3 := m.NewMutation("alice", "c", true)
	if err := q3.Record(20); err != nil {
		t.Fatal(err)
	}
	if err := q3.Record(1); err != nil {
		t.Fatalf("bucket at exactly 0 refused: %v", err)
	}
	if err := q3.Record(1); !errors.Is(err, ErrThrottled) {
		t.Fatalf("bucket below 0 accepted: %v", err)
	}
}

func TestQuotaMutationPermissive(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	m := NewManager(Options{Now: c.Now, ControllerConfig: Config{Samples: 10, Window: time.Second}})
	m.SetQuotas(ControllerMutation, Table{DefaultClientEntity: 1})
	q := m.NewMutation("ANONYMOUS", "old", false)
	for range 3 {
		if err := q.Record(5); err != nil {
			t.Fatalf("permissive quota refused: %v", err)
		}
	}
	// Burst 10, 15 taken: -5 tokens at 1/s is 5 s.
	if got := q.ThrottleTime(); got != 5000 {
		t.Fatalf("throttle %d ms, want 5000", got)
	}
	if q.Strict() {
		t.Fatal("permissive quota reports strict")
	}
	// A client no entity matches is never throttled (unbounded bucket).
	m.SetQuotas(ControllerMutation, Table{ClientEntity("x"): 1})
	u := m.NewMutation("ANONYMOUS", "y", true)
	for range 100 {
		if err := u.Record(1000); err != nil {
			t.Fatalf("unmatched client throttled: %v", err)
		}
	}
}

func TestQuotaRequestThrottleCappedAtOneWindow(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	m := NewManager(Options{Now: c.Now, Config: Config{Samples: 11, Window: 2 * time.Second}})
	m.SetQuotas(Request, Table{ClientEntity("busy"): 1}) // 1 % of a thread
	h := m.Get(Request, "ANONYMOUS", "busy")
	// 500 ms of handler time is 50 percent-seconds, far over 1 %/s over 20 s: uncapped the
	// throttle would be (2.5-1)/1*20 s = 30 s; Kafka caps it at one window.
	if got := h.Record(NanosToPercent(int64(500 * time.Millisecond))); got != 2000 {
		t.Fatalf("throttle %d ms, want the 2000 ms cap", got)
	}
	h.RecordNoThrottle(1)
	m.RecordExempt(NanosToPercent(int64(time.Second)))
	if got := m.ExemptRequestTime(); got <= 0 {
		t.Fatalf("exempt request time %v", got)
	}
	if Request.String() != "Request" || ControllerMutation.String() != "ControllerMutation" {
		t.Fatal("kind names")
	}
}
