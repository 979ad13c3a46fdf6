package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Limits are this machine's ceilings measured by the probe, in MiB/s.
type Limits struct {
	LoopbackTCP  float64 // one TCP stream over 127.0.0.1, 1 MiB writes
	WriteNoSync  float64 // sequential 1 MiB writes into the page cache
	WriteSync16K float64 // sequential 16 KiB writes, fdatasync after each
	Syncs16K     float64 // fdatasyncs per second in that run
}

// probeLimits runs each probe repeats times for about secs seconds and
// keeps the medians.
func probeLimits(dir string, secs float64, repeats int) (Limits, error) {
	var tcp, nosync, sync16, syncs []float64
	d := time.Duration(secs * float64(time.Second))
	for range repeats {
		v, err := probeLoopback(d)
		if err != nil {
			return Limits{}, err
		}
		tcp = append(tcp, v)
		if v, err = probeWrite(dir, 1<<20, false, d); err != nil {
			return Limits{}, err
		}
		nosync = append(nosync, v)
		if v, err = probeWrite(dir, 16<<10, true, d); err != nil {
			return Limits{}, err
		}
		sync16 = append(sync16, v)
		syncs = append(syncs, v*(1<<20)/(16<<10))
	}
	return Limits{LoopbackTCP: median(tcp), WriteNoSync: median(nosync), WriteSync16K: median(sync16), Syncs16K: median(syncs)}, nil
}

// probeLoopback sends 1 MiB writes over one loopback TCP connection to a
// goroutine reading with a 1 MiB buffer for d and returns MiB/s received.
func probeLoopback(d time.Duration) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bench: probe listen: %w", err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- 0
			return
		}
		defer c.Close()
		n, _ := io.CopyBuffer(io.Discard, c, make([]byte, 1<<20))
		got <- n
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, fmt.Errorf("bench: probe dial: %w", err)
	}
	buf := make([]byte, 1<<20)
	start := time.Now()
	for time.Since(start) < d {
		if _, err := c.Write(buf); err != nil {
			c.Close()
			return 0, fmt.Errorf("bench: probe write: %w", err)
		}
	}
	c.Close()
	n := <-got
	return float64(n) / (1 << 20) / time.Since(start).Seconds(), nil
}

// probeWrite appends bs-byte blocks to a fresh file in dir for d (at most
// 1 GiB), with an fdatasync after every block when sync is set, and returns
// MiB/s. Without sync the figure is the page-cache write speed (the file is
// removed unsynced).
func probeWrite(dir string, bs int, sync bool, d time.Duration) (float64, error) {
	name := filepath.Join(dir, fmt.Sprintf("probe-%d.tmp", time.Now().UnixNano()))
	f, err := os.Create(name)
	if err != nil {
		return 0, fmt.Errorf("bench: probe: %w", err)
	}
	defer os.Remove(name)
	defer f.Close()
	buf := make([]byte, bs)
	for i := range buf {
		buf[i] = byte('A' + i%26)
	}
	var written int64
	start := time.Now()
	for time.Since(start) < d && written < 1<<30 {
		if _, err := f.Write(buf); err != nil {
			return 0, fmt.Errorf("bench: probe write: %w", err)
		}
		written += int64(bs)
		if sync {
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				return 0, fmt.Errorf("bench: probe fdatasync: %w", err)
			}
		}
	}
	return float64(written) / (1 << 20) / time.Since(start).Seconds(), nil
}
