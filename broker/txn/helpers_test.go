package txn

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/storage"
	"samsa/internal/testwait"
	"samsa/kafka"
)

// storageLog is a Log over real storage.Logs, one per partition, with a
// high watermark that follows the log end (a single replica) unless
// holdHW stopped it (followers that do not fetch).
type storageLog struct {
	dir  string
	mu   sync.Mutex
	logs map[int32]*storage.Log // guarded by mu
	held bool                   // guarded by mu: the HW stays where it is
	gen  int                    // guarded by mu: bumped by depose
	// hwMoved is closed (and replaced) when a high watermark moves;
	// guarded by mu.
	hwMoved chan struct{}
}

func newStorageLog(t *testing.T) *storageLog {
	s := &storageLog{dir: t.TempDir(), logs: map[int32]*storage.Log{}, hwMoved: make(chan struct{})}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, l := range s.logs {
			_ = l.Close()
		}
	})
	return s
}

func (s *storageLog) log(p int32) (*storage.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.logs[p]; l != nil {
		return l, nil
	}
	cfg := storage.DefaultConfig()
	cfg.CleanupPolicy = storage.CleanupCompact
	tp := kafka.TopicPartition{Topic: "__transaction_state", Partition: p}
	l, err := storage.OpenLog(storage.LogOptions{Dir: filepath.Join(s.dir, fmt.Sprintf("__transaction_state-%d", p)), TP: tp, Config: cfg})
	if err != nil {
		return nil, err
	}
	s.logs[p] = l
	return l, nil
}

func (s *storageLog) Append(p int32, batch []byte) (int64, error) {
	l, err := s.log(p)
	if err != nil {
		return 0, err
	}
	info, err := l.AppendAsLeader(batch, 0)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		s.moveHWLocked(l)
	}
	return info.LastOffset + 1, nil
}

// moveHWLocked sets l's high watermark to its log end and wakes waiters.
func (s *storageLog) moveHWLocked(l *storage.Log) {
	l.SetHighWatermark(l.LogEndOffset())
	close(s.hwMoved)
	s.hwMoved = make(chan struct{})
}

func (s *storageLog) WaitReplicated(ctx context.Context, p int32, next int64, timeout time.Duration) error {
	l, err := s.log(p)
	if err != nil {
		return err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	for {
		s.mu.Lock()
		hw, ch, deposed := l.HighWatermark(), s.hwMoved, s.gen != gen
		s.mu.Unlock()
		if deposed {
			return ErrNotLeader // the replica became a follower (replica.WaitReplicated)
		}
		if hw >= next {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return ErrTimeout
		}
	}
}

// holdHW stops the high watermarks (appends stay unreplicated);
// releaseHW moves each to its log end and lets them follow again.
func (s *storageLog) holdHW() {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
}

func (s *storageLog) releaseHW() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	for _, l := range s.logs {
		s.moveHWLocked(l)
	}
}

// depose makes partition p's replica a follower that truncated to
// offset (a new leader without the records from offset): waiting
// replications end with ErrNotLeader, as replica.WaitReplicated's.
func (s *storageLog) depose(t *testing.T, p int32, offset int64) {
	t.Helper()
	l, err := s.log(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(offset); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	close(s.hwMoved)
	s.hwMoved = make(chan struct{})
}

// end returns partition p's log end offset.
func (s *storageLog) end(t *testing.T, p int32) int64 {
	t.Helper()
	l, err := s.log(p)
	if err != nil {
		t.Fatal(err)
	}
	return l.LogEndOffset()
}

func (s *storageLog) ReadFrom(p int32, off int64, maxBytes int) (ReadResult, error) {
	l, err := s.log(p)
	if err != nil {
		return ReadResult{}, err
	}
	off = max(off, l.LogStartOffset())
	end := l.LogEndOffset()
	if off >= end {
		return ReadResult{End: end}, nil
	}
	res, err := l.Read(off, maxBytes, end, true)
	if err != nil {
		return ReadResult{}, err
	}
	var buf bytes.Buffer
	if _, err := res.WriteTo(&buf); err != nil {
		return ReadResult{}, err
	}
	return ReadResult{Batches: buf.Bytes(), End: end}, nil
}

// leaders is a MarkerWriter standing in for the partition leaders: it
// records every marker and answers code for each partition (NONE unless
// set), as a leader's WriteTxnMarkers handler would.
type leaders struct {
	mu   sync.Mutex
	code int16    // guarded by mu
	got  []Marker // guarded by mu
}

func (l *leaders) WriteMarkers(_ context.Context, m Marker) map[kafka.TopicPartition]int16 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, m)
	out := map[kafka.TopicPartition]int16{}
	for _, tp := range m.Partitions {
		out[tp] = l.code
	}
	return out
}

func (l *leaders) setCode(c int16) {
	l.mu.Lock()
	l.code = c
	l.mu.Unlock()
}

func (l *leaders) markers() []Marker {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Marker(nil), l.got...)
}

// testCoordinator starts a coordinator over log and markers with one
// partition, led at epoch, and waits for its load.
func testCoordinator(t *testing.T, log Log, markers MarkerWriter, epoch int32, mod func(*Config)) *Coordinator {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NumPartitions = 1
	cfg.RetryBackoff = 10 * time.Millisecond
	if mod != nil {
		mod(&cfg)
	}
	var next int64 = 1000
	var mu sync.Mutex
	c := NewCoordinator(Options{Config: cfg, Log: log, Markers: markers,
		NewProducerID: func() (int64, error) {
			mu.Lock()
			defer mu.Unlock()
			next++
			return next, nil
		},
		PartitionFor: func(string, int32) int32 { return 0 },
		Logger:       logrus.New(),
	})
	t.Cleanup(c.Shutdown)
	c.BecomeLeader(0, epoch)
	testwait.Until(t, 20*time.Second, "the partition to load", func() bool { owned, loading := c.Owned(0); return owned && !loading })
	return c
}
