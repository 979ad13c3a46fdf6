package storage

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// BenchmarkStorageCloseLogs measures a clean Manager.Close (the storage
// part of a broker's clean shutdown) of one log dir holding
// SAMSA_RESTART_PARTITIONS (1,000) new partitions:
//   - empty: logs just created, nothing appended (what a broker holds
//     after creating 10,000 partitions, issue 18 point 2);
//   - leader: each log also got a leader epoch since its last flush (a
//     leadership wave), so the close writes each log's
//     leader-epoch-checkpoint (temp file, fsync, rename, directory fsync),
//     all of the log dir's together (checkpoint_batch.go);
//   - leader-per-log: the same logs flushed as Close did before the
//     batch, each log's Flush writing its own checkpoint durably, 32 logs
//     at a time, then Close (with nothing left to write).
//
// Each iteration creates the logs untimed and times the flushes and Close
// only; ms/log is the time per log.
//
//	go test -run XXX -bench BenchmarkStorageCloseLogs -benchtime 3x ./broker/storage
func BenchmarkStorageCloseLogs(b *testing.B) {
	partitions, _ := restartBenchSize()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	for _, mode := range []string{"empty", "leader", "leader-per-log"} {
		b.Run(mode+"/partitions="+strconv.Itoa(partitions), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "data")
				m, err := NewManager(ManagerConfig{Dirs: []string{dir}, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				if err := m.Load(context.Background()); err != nil {
					b.Fatal(err)
				}
				end := m.BeginCreateWave()
				for p := 0; p < partitions; p++ {
					l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "close", Partition: int32(p)}, DefaultConfig())
					if err != nil {
						b.Fatal(err)
					}
					if mode != "empty" {
						if err := l.LeaderEpochCache().Assign(1, 0); err != nil {
							b.Fatal(err)
						}
					}
				}
				if failed := end(); len(failed) > 0 {
					b.Fatal(failed)
				}
				b.StartTimer()
				if mode == "leader-per-log" {
					logs := m.Logs()
					forEachParallel(len(logs), closeFlushWorkers, func(i int) {
						if err := logs[i].Flush(); err != nil {
							b.Error(err)
						}
					})
				}
				if err := m.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed())/1e6/float64(b.N*partitions), "ms/log")
		})
	}
}
