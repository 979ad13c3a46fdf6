package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// phaseWatch observes one phase (produce or consume) of a scale-series run:
// the CPU every broker process used during it and, with -pprof-port and
// -profile, what broker 1 did: a CPU profile over the first -profile of
// the phase, and a goroutine dump (stacks grouped with counts, pprof
// debug=1) every second of it, up to 30, which shows where the broker's
// goroutines wait (a follower fetcher in fsync, a produce in the
// purgatory) where a CPU profile shows nothing.
type phaseWatch struct {
	c       *cluster
	cpu0    []float64
	self0   float64 // this process's (the client's) CPU seconds at the start
	t0      time.Time
	stop    chan struct{}
	wg      sync.WaitGroup
	errMu   sync.Mutex
	err     error // guarded by errMu
	profile string
}

func watchPhase(ctx context.Context, o scaleOptions, c *cluster, dir, phase string) *phaseWatch {
	w := &phaseWatch{c: c, t0: time.Now(), stop: make(chan struct{}), self0: must(cpuSeconds(os.Getpid()))}
	for _, p := range c.procs {
		w.cpu0 = append(w.cpu0, must(cpuSeconds(p.cmd.Process.Pid)))
	}
	if o.pprofPort <= 0 || o.profile <= 0 {
		return w
	}
	base := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", o.pprofPort)
	w.profile = filepath.Join(dir, "broker-1-"+phase+"-cpu.pprof")
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		w.setErr(fetchProfile(ctx, fmt.Sprintf("%sprofile?seconds=%d", base, max(1, int(o.profile.Seconds()))), w.profile))
	}()
	go func() {
		defer w.wg.Done()
		w.setErr(dumpGoroutines(ctx, base+"goroutine?debug=1", filepath.Join(dir, "broker-1-"+phase+"-goroutines.txt"), w.stop))
	}()
	return w
}

func (w *phaseWatch) setErr(err error) {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// end stops the goroutine dumps, waits for the CPU profile and returns the
// brokers' CPU during the phase in cores (CPU seconds per wall second,
// summed over the three processes).
func (w *phaseWatch) end() (brokers, client float64, err error) {
	secs := time.Since(w.t0).Seconds()
	client = (must(cpuSeconds(os.Getpid())) - w.self0) / secs
	var cpu float64
	for i, p := range w.c.procs {
		cpu += must(cpuSeconds(p.cmd.Process.Pid)) - w.cpu0[i]
	}
	close(w.stop)
	w.wg.Wait()
	if w.profile != "" && w.err == nil {
		logf("CPU profile of broker 1: %s (go tool pprof -top %s)", w.profile, w.profile)
	}
	return cpu / secs, client, w.err
}

// dumpGoroutines appends a goroutine dump from url to path every second
// until stop closes (at most 30).
func dumpGoroutines(ctx context.Context, url, path string, stop <-chan struct{}) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for i := range 30 {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		fmt.Fprintf(f, "=== dump %d, %s\n", i+1, time.Now().UTC().Format(time.RFC3339))
		if err := copyURL(ctx, url, f); err != nil {
			return fmt.Errorf("bench: goroutine dump: %w", err)
		}
	}
	return nil
}

// copyURL writes the body of a GET of url (which must answer 200) to w.
func copyURL(ctx context.Context, url string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
