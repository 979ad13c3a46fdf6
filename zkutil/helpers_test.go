package zkutil_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// connect opens a Client on a fresh chroot of the shared ZooKeeper.
func connect(t *testing.T, connect string) *zkutil.Client {
	t.Helper()
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect, SessionTimeout: 6 * time.Second, Logger: log})
	if err != nil {
		t.Fatalf("connect %s: %v", connect, err)
	}
	t.Cleanup(c.Close)
	return c
}

// counter is a callback target that only counts (callbacks must only enqueue).
type counter struct{ ch chan struct{} }

func newCounter() *counter { return &counter{ch: make(chan struct{}, 1024)} }

func (c *counter) fn() { c.ch <- struct{}{} }

// wait waits for at least one call.
func (c *counter) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: callback not called", what)
	}
}

// drain empties the channel and returns how many calls there were.
func (c *counter) drain() int {
	n := 0
	for {
		select {
		case <-c.ch:
			n++
		default:
			return n
		}
	}
}

func mustf(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}
