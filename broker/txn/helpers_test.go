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
// high watermark that follows the log end (a single replica).
type storageLog struct {
	dir  string
	mu   sync.Mutex
	logs map[int32]*storage.Log // guarded by mu
}

func newStorageLog(t *testing.T) *storageLog {
	s := &storageLog{dir: t.TempDir(), logs: map[int32]*storage.Log{}}
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

func (s *storageLog) Append(_ context.Context, p int32, batch []byte, _ time.Duration) error {
	l, err := s.log(p)
	if err != nil {
		return err
	}
	if _, err := l.AppendAsLeader(batch, 0); err != nil {
		return err
	}
	l.SetHighWatermark(l.LogEndOffset())
	return nil
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
