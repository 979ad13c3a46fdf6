package group

import "time"

// Clock is the coordinator's time source (STYLE S6.11): session, rebalance
// and initial-delay timeouts, commit timestamps and offset expiry all read
// it. Tests inject a manual clock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, unless the returned
	// Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did.
	Stop() bool
}

// SystemClock is the Clock of production: the time package.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
