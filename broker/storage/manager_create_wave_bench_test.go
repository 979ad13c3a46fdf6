package storage

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// BenchmarkStorageCreateLogs is what a broker pays per new log when a LeaderAndIsr creates
// a wave of them (issue 18 point 2: 10,000 partitions created per broker): one op is one
// GetOrCreateLog of a new partition, in waves of 100 (one topic's worth) sharing one
// log-dir fsync each, created one after another (wave) or planned in request order and
// created on 128 goroutines as the replica Manager's wave does (wave-parallel), or each
// fsyncing the log dir (one-by-one, before BeginCreateWave). "raw-layout" is the floor any
// Kafka-layout broker pays: only the file-system operations of a new empty log (the
// partition directory, the .log, and the .index and .timeindex sized to
// segment.index.bytes, as Kafka 2.8's resizeIndexes does), without Samsa's bookkeeping.
// "raw-lazy-layout" is the same floor for Samsa's layout since index files are created when
// first needed (doc.go, "Lazy index files"): the directory and the .log only. Run it with
// the disk busy too (a background dd into the same file system), where creations wait
// behind writeback and wave-parallel overlaps those waits.
func BenchmarkStorageCreateLogs(b *testing.B) {
	for _, mode := range []string{"wave", "wave-parallel", "one-by-one"} {
		b.Run(mode, func(b *testing.B) { benchCreateLogs(b, mode) })
	}
	for _, raw := range []struct {
		name     string
		suffixes []string
	}{
		{"raw-layout", []string{LogFileSuffix, IndexFileSuffix, TimeIndexFileSuffix}},
		{"raw-lazy-layout", []string{LogFileSuffix}},
	} {
		b.Run(raw.name, func(b *testing.B) { benchRawLayout(b, raw.suffixes) })
	}
}

// benchCreateLogs creates b.N new logs in waves of 100 as mode says.
func benchCreateLogs(b *testing.B, mode string) {
	const perWave, workers = 100, 128
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	m, err := NewManager(ManagerConfig{Dirs: []string{b.TempDir()}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	cfg := DefaultConfig()
	b.ResetTimer()
	for i := 0; i < b.N; i += perWave {
		end := func() map[kafka.TopicPartition]error { return nil }
		if mode != "one-by-one" {
			end = m.BeginCreateWave()
		}
		tps := make([]kafka.TopicPartition, 0, perWave)
		for p := i; p < min(i+perWave, b.N); p++ {
			tps = append(tps, kafka.TopicPartition{Topic: "t" + strconv.Itoa(p/perWave), Partition: int32(p % perWave)})
		}
		n := 1
		if mode == "wave-parallel" {
			m.PlanNewLogs(tps)
			n = workers
		}
		forEachParallel(len(tps), n, func(j int) {
			if _, err := m.GetOrCreateLog(tps[j], cfg); err != nil {
				b.Error(err)
			}
		})
		if failed := end(); len(failed) > 0 {
			b.Fatal(failed)
		}
	}
}

// benchRawLayout creates b.N partition directories holding the files
// named by suffixes at base 0, the index files sized to
// segment.index.bytes.
func benchRawLayout(b *testing.B, suffixes []string) {
	root := b.TempDir()
	size := int64(DefaultConfig().SegmentIndexBytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(root, "t-"+strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for _, suffix := range suffixes {
			f, err := os.OpenFile(segmentFileName(dir, 0, suffix), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			if suffix != LogFileSuffix {
				err = f.Truncate(size)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
