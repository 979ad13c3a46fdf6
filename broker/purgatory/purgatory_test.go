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
