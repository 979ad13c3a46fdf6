package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
	"samsa/kafka"
)

// testBatch builds a producer batch of n records with valueSize-byte values
// and CreateTime ts (base offset 0, no leader epoch).
func testBatch(tb testing.TB, n, valueSize int, ts int64) []byte {
	tb.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, valueSize)
		recs[i] = record.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("k%d", i)), Value: v}
	}
	b, err := record.Build(record.NewBuildHeader(0, ts), recs, record.CodecNone)
	if err != nil {
		tb.Fatalf("build batch: %v", err)
	}
	return b
}

// fakeClock is an injectable clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.UnixMilli(1_700_000_000_000)} }

// testLogger returns a logger writing into the test log.
func testLogger(tb testing.TB) logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(testWriter{tb})
	l.SetLevel(logrus.InfoLevel)
	return l
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// smallConfig rolls often and indexes densely.
func smallConfig() Config {
	c := DefaultConfig()
	c.SegmentBytes = 4096
	c.IndexIntervalBytes = 256
	c.SegmentIndexBytes = 1024
	c.FileDeleteDelayMs = 0
	return c
}

func openTestLog(tb testing.TB, dir string, cfg Config, clock *fakeClock, mod func(*LogOptions)) *Log {
	tb.Helper()
	o := LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: cfg, Logger: testLogger(tb), Now: clock.Now, CleanShutdown: true}
	if mod != nil {
		mod(&o)
	}
	l, err := OpenLog(o)
	if err != nil {
		tb.Fatalf("open log: %v", err)
	}
	return l
}

// readBatches reads every batch in [from, upTo) through Log.Read, one
// region at a time, and returns their headers and bytes.
func readBatches(tb testing.TB, l *Log, from, upTo int64) []record.Batch {
	tb.Helper()
	var out []record.Batch
	off := from
	for i := 0; i < 100000 && off < upTo; i++ {
		res, err := l.Read(off, 1000, upTo, true)
		if err != nil {
			tb.Fatalf("read at %d: %v", off, err)
		}
		if res.Size() == 0 {
			break
		}
		var buf bytes.Buffer
		if _, err := res.WriteTo(&buf); err != nil {
			tb.Fatalf("write region: %v", err)
		}
		rest := buf.Bytes()
		for len(rest) > 0 {
			b, r, err := record.NextBatch(rest)
			if err != nil {
				tb.Fatalf("region at %d holds a partial batch: %v", off, err)
			}
			if err := b.Validate(record.Limits{}); err != nil {
				tb.Fatalf("batch at %d invalid: %v", b.BaseOffset(), err)
			}
			rest = r
			if b.LastOffset() < off {
				continue
			}
			out = append(out, b)
			off = b.NextOffset()
		}
	}
	return out
}

// errorIs fails unless errors.Is(err, target).
func errorIs(tb testing.TB, err, target error) {
	tb.Helper()
	if !errors.Is(err, target) {
		tb.Fatalf("error %v, want %v", err, target)
	}
}

var _ = io.Discard

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
