package clustertest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// kcatProc is a kcat process started by startKcat.
type kcatProc struct {
	cmd *exec.Cmd
	// cancel ends kcat's 60 s context: SIGTERM, then SIGKILL 10 s later.
	cancel context.CancelFunc
	// done is closed once kcat's stdout and stderr are read to the end
	// and the process is reaped.
	done chan struct{}
}

// startKcat runs kcat with args for at most 60 s (then SIGTERM, and
// SIGKILL 10 s later). Each stdout line that decodes as a kcat -J record
// goes to onRecord, each stderr line to onStderr; both are called from
// reader goroutines, one per stream.
func startKcat(t *testing.T, kcat string, args []string, onRecord func(kcatMsg), onStderr func(line string)) *kcatProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p := &kcatProc{cancel: cancel, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, kcat, args...)
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGTERM) }
	p.cmd.WaitDelay = 10 * time.Second
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m kcatMsg
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				onRecord(m)
			}
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			onStderr(sc.Text())
		}
	}()
	go func() {
		wg.Wait()
		_ = p.cmd.Wait()
		cancel()
		close(p.done)
	}()
	return p
}
