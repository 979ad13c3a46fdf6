package tooltest

// Running a test's commands in-process: once (RunTool) or in the
// background until the test stops them (StartTool).

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"samsa/broker/brokertest"
	"samsa/tools/internal/tool"
)

// Build returns the commands a test's application holds.
type Build = func(tool.Env) []*cli.Command

// RunTool runs the CLI built from build in-process with stdin and returns
// stdout, stderr and the exit code.
func RunTool(t *testing.T, build Build, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := tool.Run(append([]string{"samsa"}, args...), tool.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut}, build)
	return out.String(), errOut.String(), code
}

// LockedBuffer is an io.Writer tests read while a command still runs.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// BgTool runs the CLI in a goroutine until it returns or its context ends.
type BgTool struct {
	Out, ErrOut LockedBuffer
	cancel      context.CancelFunc
	done        chan int
}

// StartTool starts the command and waits for its first output line; the
// test's cleanup stops it.
func StartTool(t *testing.T, build Build, args ...string) *BgTool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &BgTool{cancel: cancel, done: make(chan int, 1)}
	go func() {
		b.done <- tool.Run(append([]string{"samsa"}, args...), tool.Env{Stdin: strings.NewReader(""), Stdout: &b.Out, Stderr: &b.ErrOut, Context: ctx}, build)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-b.done:
			b.done <- code
		case <-time.After(60 * time.Second):
			t.Errorf("%v did not stop", args)
		}
	})
	// urfave/cli applies its global help flag while parsing, so two Runs
	// must not parse at once: wait for the first output line.
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if b.Out.String() == "" {
			return fmt.Errorf("%v has not started", args)
		}
		return nil
	})
	return b
}

// Stop cancels the tool and returns its exit code.
func (b *BgTool) Stop(t *testing.T) int {
	t.Helper()
	b.cancel()
	select {
	case code := <-b.done:
		b.done <- code
		return code
	case <-time.After(60 * time.Second):
		t.Fatal("tool did not stop")
		return -1
	}
}
