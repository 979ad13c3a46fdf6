package testwait

import (
	"testing"
	"time"
)

const (
	firstPoll = 2 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// For polls cond until it returns nil or timeout passes; then it fails t
// with cond's last error. cond runs at least once, even with a timeout of
// zero.
func For(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for wait := firstPoll; ; wait = min(2*wait, maxPoll) {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", timeout, err)
		}
		time.Sleep(wait)
	}
}

// Until polls cond until it returns true or timeout passes; then it fails
// t with "timed out waiting for <what>".
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for wait := firstPoll; !cond(); wait = min(2*wait, maxPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(wait)
	}
}
