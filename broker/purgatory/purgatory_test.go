package purgatory

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"samsa/kafka"
)

func TestPurgatoryImmediateCheck(t *testing.T) {
	p := New("Produce")
	err := p.Wait(context.Background(), time.Now().Add(time.Minute), []kafka.TopicPartition{{Topic: "a", Partition: 0}}, func() bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if p.Watched(kafka.TopicPartition{Topic: "a", Partition: 0}) != 0 {
		t.Fatal("waiter left registered")
	}
}

func TestPurgatoryNotifyCompletes(t *testing.T) {
	p := New("Fetch")
	var hw atomic.Int64
	k := kafka.TopicPartition{Topic: "t", Partition: 3}
	done := make(chan error, 1)
	go func() {
		done <- p.Wait(context.Background(), time.Now().Add(time.Minute), []kafka.TopicPartition{k}, func() bool { return hw.Load() >= 5 })
	}()
	deadline := time.Now().Add(10 * time.Second)
	for p.Watched(k) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("waiter never registered")
		}
		time.Sleep(time.Millisecond)
	}
	hw.Store(2)
	p.Notify(k)
	p.Notify(kafka.TopicPartition{Topic: "other", Partition: 0})
	hw.Store(5)
	p.Notify(k)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p.Size() != 0 {
		t.Fatalf("size %d after completion", p.Size())
	}
}

func TestPurgatoryDeadline(t *testing.T) {
	p := New("Produce")
	start := time.Now()
	err := p.Wait(context.Background(), start.Add(30*time.Millisecond), []kafka.TopicPartition{{Topic: "a", Partition: 0}}, func() bool { return false })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("returned before the deadline")
	}
	if p.Expired() != 1 {
		t.Fatalf("expired = %d", p.Expired())
	}
	if err := p.Wait(context.Background(), start, nil, func() bool { return false }); !errors.Is(err, ErrTimeout) {
		t.Fatalf("past deadline: %v", err)
	}
}

func TestPurgatoryContextCancel(t *testing.T) {
	p := New("Fetch")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- p.Wait(ctx, time.Time{}, []kafka.TopicPartition{{Topic: "a", Partition: 0}}, func() bool { return false })
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestPurgatoryNotifyAllWakesEveryone(t *testing.T) {
	p := New("Fetch")
	var ready atomic.Bool
	const n = 20
	done := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			done <- p.Wait(context.Background(), time.Now().Add(time.Minute), []kafka.TopicPartition{{Topic: "t", Partition: int32(i)}}, ready.Load)
		}(i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.Size() < n {
		if time.Now().After(deadline) {
			t.Fatal("waiters never parked")
		}
		time.Sleep(time.Millisecond)
	}
	ready.Store(true)
	p.NotifyAll()
	for i := 0; i < n; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkPurgatoryNotifyNoWaiters(b *testing.B) {
	p := New("Produce")
	k := kafka.TopicPartition{Topic: "t", Partition: 0}
	for b.Loop() {
		p.Notify(k)
	}
}

func TestPurgatoryWaitChan(t *testing.T) {
	p := New("Fetch")
	wake := make(chan struct{}, 1)
	if err := p.WaitChan(context.Background(), time.Now().Add(time.Minute), wake, func() bool { return true }); err != nil {
		t.Fatalf("immediate: %v", err)
	}
	// Woken through its own channel: the second check passes.
	calls := 0
	wake <- struct{}{}
	err := p.WaitChan(context.Background(), time.Now().Add(time.Minute), wake, func() bool { calls++; return calls == 2 })
	if err != nil || calls != 2 {
		t.Fatalf("woken: %v after %d checks", err, calls)
	}
	start := time.Now()
	if err := p.WaitChan(context.Background(), start.Add(30*time.Millisecond), wake, func() bool { return false }); !errors.Is(err, ErrTimeout) {
		t.Fatalf("deadline: %v", err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("returned before the deadline")
	}
	if err := p.WaitChan(context.Background(), start, wake, func() bool { return false }); !errors.Is(err, ErrTimeout) {
		t.Fatalf("past deadline: %v", err)
	}
	if p.Expired() != 2 {
		t.Fatalf("expired = %d, want 2", p.Expired())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.WaitChan(ctx, time.Time{}, wake, func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if p.Size() != 0 {
		t.Fatalf("size %d after every wait ended", p.Size())
	}
}

// BenchmarkPurgatoryWaitWoken is one acks=all produce's wait: registered,
// the first check fails, the deadline timer is armed, a Notify wakes it and
// the second check passes (no goroutine switch: the check notifies itself).
func BenchmarkPurgatoryWaitWoken(b *testing.B) {
	p := New("Produce")
	keys := []kafka.TopicPartition{{Topic: "t", Partition: 0}}
	n := 0
	check := func() bool {
		n++
		if n%2 == 1 {
			p.Notify(keys[0])
			return false
		}
		return true
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Wait(context.Background(), time.Now().Add(time.Second), keys, check); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPurgatoryWaitChanWoken is a changed-only session fetch's wait:
// the first check fails, the deadline timer is armed, the session's channel
// wakes it and the second check passes.
func BenchmarkPurgatoryWaitChanWoken(b *testing.B) {
	p := New("Fetch")
	wake := make(chan struct{}, 1)
	n := 0
	check := func() bool {
		n++
		if n%2 == 1 {
			wake <- struct{}{}
			return false
		}
		return true
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.WaitChan(context.Background(), time.Now().Add(time.Second), wake, check); err != nil {
			b.Fatal(err)
		}
	}
}
