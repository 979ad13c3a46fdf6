package childproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitState waits (bounded) until pid's /proc state is want.
func waitState(t *testing.T, pid int, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := State(pid)
		if err == nil && s == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d state %q (%v), want %q", pid, s, err, want)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc, not synchronising
	}
}

func TestProcLifecycle(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	p := &Proc{Name: "sleeper", LogPath: log, Banner: "childproc-test",
		NewCmd: func() *exec.Cmd { return exec.Command("sleep", "600") }}
	if p.Running() || p.Pid() != 0 || p.Signal(syscall.SIGTERM) != nil || p.Wait(time.Second) != nil {
		t.Fatal("a never-started process looks alive")
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if err := p.Start(); err != nil || p.Pid() != pid {
		t.Fatalf("second Start while running: %v, pid %d -> %d", err, pid, p.Pid())
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil || !p.Paused() {
		t.Fatalf("SIGSTOP: %v paused=%v", err, p.Paused())
	}
	waitState(t, pid, "T")
	if p.Wait(50*time.Millisecond) == nil {
		t.Fatal("Wait returned while the process runs")
	}
	// Stop resumes the paused process first, then SIGTERM ends sleep.
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Running() || p.Paused() || p.ExitErr() == nil {
		t.Fatalf("after Stop: running=%v paused=%v exit=%v", p.Running(), p.Paused(), p.ExitErr())
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("signal to an exited process: %v", err)
	}
	if err := p.Start(); err != nil || p.Pid() == pid || !p.Running() {
		t.Fatalf("restart: %v pid %d", err, p.Pid())
	}
	if err := p.Kill(10 * time.Second); err != nil || p.Running() {
		t.Fatalf("Kill: %v running=%v", err, p.Running())
	}
	b, err := os.ReadFile(log)
	if err != nil || strings.Count(string(b), "==== childproc-test: starting sleeper at ") != 2 {
		t.Fatalf("log %q (%v): want two banners", b, err)
	}
}

func TestStateMalformed(t *testing.T) {
	if _, err := State(-1); err == nil {
		t.Fatal("state of pid -1")
	}
}
