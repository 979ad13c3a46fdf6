package childproc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one restartable child process; see the package comment. Set the
// exported fields before the first Start.
type Proc struct {
	Name    string           // for messages and the banner
	LogPath string           // stdout and stderr of every incarnation, appended
	Banner  string           // the banner line's prefix, e.g. "brokertest"
	NewCmd  func() *exec.Cmd // the command of one incarnation
	Setpgid bool             // run it in its own process group

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd has exited
	err    error         // cmd.Wait's result, valid after done
	paused bool
}

// Start starts an incarnation unless one is running.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runningLocked() {
		return nil
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("childproc: %w", err)
	}
	fmt.Fprintf(logf, "==== %s: starting %s at %s\n", p.Banner, p.Name, time.Now().Format(time.RFC3339Nano))
	cmd := p.NewCmd()
	cmd.Stdout, cmd.Stderr = logf, logf
	// The child dies with its parent even if no cleanup runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: p.Setpgid}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("childproc: start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	p.cmd, p.done, p.err, p.paused = cmd, done, nil, false
	return nil
}

func (p *Proc) runningLocked() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Running reports whether an incarnation is alive (paused counts as alive).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runningLocked()
}

// Paused reports whether SIGSTOP was the last of SIGSTOP, SIGCONT and
// SIGKILL sent through Signal.
func (p *Proc) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// Signal sends sig to the running incarnation; a no-op when none runs.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.runningLocked() {
		return nil
	}
	switch sig {
	case syscall.SIGSTOP:
		p.paused = true
	case syscall.SIGCONT, syscall.SIGKILL:
		p.paused = false
	}
	return p.cmd.Process.Signal(sig)
}

// Wait waits up to d for the incarnation to exit; nil when it has (or
// none was started).
func (p *Proc) Wait(d time.Duration) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("childproc: %s still running after %v", p.Name, d)
	}
}

// ExitErr is the last incarnation's exit status (cmd.Wait's error), nil
// while it runs or when it exited cleanly.
func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runningLocked() {
		return nil
	}
	return p.err
}

// Kill SIGKILLs the incarnation (resuming it first, to be explicit) and
// waits up to d until it has exited.
func (p *Proc) Kill(d time.Duration) error {
	_ = p.Signal(syscall.SIGCONT)
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	return p.Wait(d)
}

// Stop sends SIGTERM (SIGCONT first if paused), waits up to grace, then
// SIGKILLs and waits up to 30 s more.
func (p *Proc) Stop(grace time.Duration) error {
	if p.Paused() {
		_ = p.Signal(syscall.SIGCONT)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	if p.Wait(grace) == nil {
		return nil
	}
	return p.Kill(30 * time.Second)
}

// Pid is the running incarnation's pid, 0 when none was started.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// State returns the one-letter state field of /proc/<pid>/stat ("R", "S",
// "T" for stopped, ...). The state follows the command name, which is in
// parentheses and may itself contain spaces or parentheses.
func State(pid int) (string, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", fmt.Errorf("childproc: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) == 0 {
		return "", fmt.Errorf("childproc: malformed /proc/%d/stat", pid)
	}
	return f[0], nil
}
