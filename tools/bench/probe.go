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
	WriteNoSync  float64 // sequential 1 MiB writes into the page cache (recycled pages)
	WriteNewPage float64 // the same into pages new to the page cache (see probeWriteNew)
	WriteSync16K float64 // sequential 16 KiB writes, fdatasync after each
	Syncs16K     float64 // fdatasyncs per second in that run
}

// probeLimits runs each probe repeats times for about secs seconds and
// keeps the medians.
func probeLimits(dir string, secs float64, repeats int) (Limits, error) {
	var tcp, nosync, newpage, sync16, syncs []float64
	d := time.Duration(secs * float64(time.Second))
	for range repeats {
		v, err := probeLoopback(d)
		if err != nil {
			return Limits{}, err
		}
		tcp = append(tcp, v)
		if v, err = probeWriteNew(dir, newPageProbeBytes); err != nil {
			return Limits{}, err
		}
		newpage = append(newpage, v)
		// Right after probeWriteNew freed its pages, so this run reuses
		// them before the kernel can hand them back to the hypervisor.
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
	return Limits{LoopbackTCP: median(tcp), WriteNoSync: median(nosync), WriteNewPage: median(newpage),
		WriteSync16K: median(sync16), Syncs16K: median(syncs)}, nil
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

// newPageProbeBytes is how much probeWriteNew writes, in newPageProbeStretch
// stretches. On the build machines the first GiB or so of free memory was
// fast and the rest slow, so the probe must write past it.
const (
	newPageProbeBytes   = 2 << 30
	newPageProbeStretch = 256 << 20
)

// probeWriteNew writes size bytes in 1 MiB blocks to a fresh file that is
// kept until the end, so every block needs a page new to the page cache,
// and returns the rate (MiB/s) of its slowest stretch. A broker's log stays
// cached, so each appended byte needs such a page. On a virtual machine
// whose guest reports free pages to the hypervisor (virtio-balloon free
// page reporting, on the build machines), a page that was handed back
// costs a hypervisor fault when it is used again: there the slow stretches
// ran at 350–420 MiB/s against 2–5 GiB/s for pages still held, and perf
// showed the kernel's copy into the page cache as 50–67 % of each broker's
// CPU under acks=all RF=3 load (docs/benchmarks.md).
func probeWriteNew(dir string, size int64) (float64, error) {
	name := filepath.Join(dir, fmt.Sprintf("probe-new-%d.tmp", time.Now().UnixNano()))
	f, err := os.Create(name)
	if err != nil {
		return 0, fmt.Errorf("bench: probe: %w", err)
	}
	defer os.Remove(name)
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte('a' + i%26)
	}
	slowest := 0.0
	for done := int64(0); done < size; done += newPageProbeStretch {
		start := time.Now()
		for written := int64(0); written < newPageProbeStretch; written += int64(len(buf)) {
			if _, err := f.Write(buf); err != nil {
				return 0, fmt.Errorf("bench: probe write: %w", err)
			}
		}
		rate := float64(newPageProbeStretch) / (1 << 20) / time.Since(start).Seconds()
		if slowest == 0 || rate < slowest {
			slowest = rate
		}
	}
	return slowest, nil
}
