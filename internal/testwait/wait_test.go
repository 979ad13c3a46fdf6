package testwait

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalTB records Fatalf and ends its goroutine as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn with a fatalTB on its own goroutine and returns the Fatalf
// message ("" when fn returned normally).
func run(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the wait did not end")
	}
	return f.msg
}

func TestForReturnsOnceConditionHolds(t *testing.T) {
	calls := 0
	msg := run(t, func(tb testing.TB) {
		For(tb, 20*time.Second, func() error {
			if calls++; calls < 4 {
				return errors.New("not yet")
			}
			return nil
		})
	})
	if msg != "" || calls != 4 {
		t.Fatalf("msg %q after %d calls, want no failure after 4", msg, calls)
	}
}

func TestForFailsWithLastError(t *testing.T) {
	calls := 0
	msg := run(t, func(tb testing.TB) {
		For(tb, 30*time.Millisecond, func() error {
			calls++
			return fmt.Errorf("attempt %d", calls)
		})
	})
	want := fmt.Sprintf("condition not met after 30ms: attempt %d", calls)
	if msg != want || calls < 2 {
		t.Fatalf("msg %q after %d calls, want %q", msg, calls, want)
	}
}

func TestForZeroTimeoutRunsOnce(t *testing.T) {
	calls := 0
	msg := run(t, func(tb testing.TB) {
		For(tb, 0, func() error { calls++; return nil })
	})
	if msg != "" || calls != 1 {
		t.Fatalf("msg %q after %d calls", msg, calls)
	}
}

func TestUntil(t *testing.T) {
	calls := 0
	if msg := run(t, func(tb testing.TB) {
		Until(tb, 20*time.Second, "three calls", func() bool { calls++; return calls == 3 })
	}); msg != "" || calls != 3 {
		t.Fatalf("msg %q after %d calls", msg, calls)
	}
	msg := run(t, func(tb testing.TB) {
		Until(tb, 10*time.Millisecond, "never", func() bool { return false })
	})
	if !strings.HasPrefix(msg, "timed out waiting for never") {
		t.Fatalf("msg %q", msg)
	}
}
