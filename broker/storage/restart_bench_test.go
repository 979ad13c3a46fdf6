package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
	"samsa/kafka"
)

// restartBenchSize is the shape of BenchmarkStorageRestart: partitions
// (SAMSA_RESTART_PARTITIONS, default 1,000) of 10 segments each.
func restartBenchSize() (partitions, segments int) {
	partitions = 1000
	if v, err := strconv.Atoi(os.Getenv("SAMSA_RESTART_PARTITIONS")); err == nil && v > 0 {
		partitions = v
	}
	return partitions, 10
}

// loadCounter counts the storage log lines that mean work beyond opening
// files: index rebuilds and per-log recovery.
type loadCounter struct {
	rebuilt, recoveredSegs atomic.Int64
}

func (c *loadCounter) Levels() []logrus.Level { return logrus.AllLevels }
func (c *loadCounter) Fire(e *logrus.Entry) error {
	switch {
	case strings.Contains(e.Message, "rebuilding indexes"):
		c.rebuilt.Add(1)
	case strings.Contains(e.Message, "recovering segment"):
		c.recoveredSegs.Add(1)
	}
	return nil
}

func restartLogger(c *loadCounter) logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(discardWriter{})
	l.SetLevel(logrus.DebugLevel)
	l.AddHook(c)
	return l
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// writeRestartFixture fills dir with partitions × segments segments of
// eight ~1 KiB batches each and closes the manager cleanly.
func writeRestartFixture(b *testing.B, dir string, partitions, segments int) {
	b.Helper()
	value := make([]byte, 100)
	recs := make([]record.Record, 10)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Value: value}
	}
	batch, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()), recs, record.CodecNone)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewManager(ManagerConfig{Dirs: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	for p := 0; p < partitions; p++ {
		l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "restart", Partition: int32(p)}, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		for s := 0; s < segments; s++ {
			if s > 0 {
				if err := l.Roll(); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < 8; i++ {
				if _, err := l.AppendAsLeader(batch, 0); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStorageRestart measures Manager.Load of one log dir holding
// SAMSA_RESTART_PARTITIONS (1,000) partitions × 10 segments:
//   - clean: after a clean Close (.kafka_cleanshutdown present): no index
//     is rebuilt and no segment is read beyond the active one's tail;
//   - hardkill: the marker is gone and the recovery-point checkpoint is
//     as a crash leaves it: only segments at or past each log's recovery
//     point are recovered (Kafka's LogLoader);
//   - norecoverypoint: no marker and no checkpoint: every segment is
//     recovered (the worst case, e.g. a first crash before any checkpoint).
//
// Each iteration loads and then closes; only the load is timed. The
// metrics rebuilt/op and recovered/op count segments whose indexes were
// rebuilt or whose batches were re-read.
//
//	go test -run XXX -bench BenchmarkStorageRestart -benchtime 3x ./broker/storage
func BenchmarkStorageRestart(b *testing.B) {
	partitions, segments := restartBenchSize()
	dir := filepath.Join(b.TempDir(), "data")
	writeRestartFixture(b, dir, partitions, segments)
	for _, mode := range []string{"clean", "hardkill", "norecoverypoint"} {
		b.Run(fmt.Sprintf("%s/partitions=%d/segments=%d", mode, partitions, segments), func(b *testing.B) {
			var c loadCounter
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				switch mode {
				case "hardkill":
					removeIfExists(b, filepath.Join(dir, CleanShutdownFile))
				case "norecoverypoint":
					removeIfExists(b, filepath.Join(dir, CleanShutdownFile))
					removeIfExists(b, filepath.Join(dir, RecoveryPointCheckpointFile))
				}
				m, err := NewManager(ManagerConfig{Dirs: []string{dir}, Logger: restartLogger(&c)})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := m.Load(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if got := len(m.Logs()); got != partitions {
					b.Fatalf("loaded %d logs, want %d", got, partitions)
				}
				if err := m.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(c.rebuilt.Load())/float64(b.N), "rebuilt/op")
			b.ReportMetric(float64(c.recoveredSegs.Load())/float64(b.N), "recovered/op")
		})
	}
}

func removeIfExists(b *testing.B, path string) {
	b.Helper()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
}

// BenchmarkStorageRestartEmpty measures Manager.Load (clean) of 1,000
// empty partitions whose leader-epoch-checkpoint holds an entry at the log
// end (a leader elected on an empty log): the load drops those entries.
//
//	go test -run XXX -bench BenchmarkStorageRestartEmpty -benchtime 3x ./broker/storage
func BenchmarkStorageRestartEmpty(b *testing.B) {
	partitions, _ := restartBenchSize()
	dir := filepath.Join(b.TempDir(), "data")
	m, err := NewManager(ManagerConfig{Dirs: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	for p := 0; p < partitions; p++ {
		l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "empty", Partition: int32(p)}, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		if err := l.LeaderEpochCache().Assign(1, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// Put the entries back: the previous load dropped them in memory
		// (and a clean close keeps the file as it is).
		m, err := NewManager(ManagerConfig{Dirs: []string{dir}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := m.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
