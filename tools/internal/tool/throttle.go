package tool

import (
	"context"
	"math"
	"time"
)

// ThroughputThrottler is Kafka's ThroughputThrottler: after each send it
// checks whether the average rate since the start exceeds the target and
// then sleeps off an accumulated deficit in slices of at least 2 ms.
type ThroughputThrottler struct {
	startMs     int64
	target      int64
	sleepTimeNs int64
	deficitNs   int64
}

const minThrottleSleepNs = 2 * int64(time.Millisecond)

// NewThroughputThrottler is a throttler for target records per second from
// startMs (target < 0: no limit; 0: block until the context ends).
func NewThroughputThrottler(target, startMs int64) *ThroughputThrottler {
	t := &ThroughputThrottler{startMs: startMs, target: target, sleepTimeNs: math.MaxInt64}
	if target > 0 {
		t.sleepTimeNs = int64(time.Second) / target
	}
	return t
}

// shouldThrottle is ThroughputThrottler.shouldThrottle (Java float maths).
func (t *ThroughputThrottler) ShouldThrottle(amountSoFar, sendStartMs int64) bool {
	if t.target < 0 {
		return false
	}
	elapsedSec := float32(sendStartMs-t.startMs) / 1000
	return elapsedSec > 0 && float32(amountSoFar)/elapsedSec > float32(t.target)
}

// throttle sleeps as ThroughputThrottler.throttle does. A target of 0
// blocks until ctx ends, as Kafka's waits until woken up.
func (t *ThroughputThrottler) Throttle(ctx context.Context) {
	if t.target == 0 {
		<-ctx.Done()
		return
	}
	t.deficitNs += t.sleepTimeNs
	if t.deficitNs < minThrottleSleepNs {
		return
	}
	timer := time.NewTimer(time.Duration(t.deficitNs))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	t.deficitNs = 0
}

// NowMs is System.currentTimeMillis.
func NowMs() int64 { return time.Now().UnixMilli() }
