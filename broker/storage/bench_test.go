package storage

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/kafka"
)

// benchBatch is a producer batch of 100-byte records, as many as fit in
// 16 KiB (148).
func benchBatch(b *testing.B) []byte {
	b.Helper()
	value := make([]byte, 100)
	for n := 160; n > 0; n-- {
		recs := make([]record.Record, n)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), Value: value}
		}
		batch, err := record.Build(record.NewBuildHeader(0, 1_700_000_000_000), recs, record.CodecNone)
		if err != nil {
			b.Fatal(err)
		}
		if len(batch) <= 16<<10 {
			return batch
		}
	}
	b.Fatal("no batch fits 16 KiB")
	return nil
}

// BenchmarkStorageAppend compares Log.AppendAsLeader (validation with
// record decoding, offset assignment, index maintenance, page-cache
// write) with a plain os.File.Write of the same bytes, in the same run.
// Run: go test -run XXX -bench BenchmarkStorageAppend ./broker/storage
func BenchmarkStorageAppend(b *testing.B) {
	batch := benchBatch(b)
	b.Run("log", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "t-0")
		cfg := DefaultConfig()
		l, err := OpenLog(LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: cfg, CleanShutdown: true})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := l.AppendAsLeader(batch, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("interleaved", func(b *testing.B) { benchmarkAppendInterleaved(b, batch) })
	b.Run("plainfile", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := f.Write(batch); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchmarkAppendInterleaved alternates one log append and one plain write
// per iteration and reports each one's time and the throughput ratio, so
// that load from other processes hits both equally.
func benchmarkAppendInterleaved(b *testing.B, batch []byte) {
	dir := filepath.Join(b.TempDir(), "t-0")
	l, err := OpenLog(LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: DefaultConfig(), CleanShutdown: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var logTime, plainTime time.Duration
	b.SetBytes(int64(2 * len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Swap the order every iteration so neither side always runs
		// right after the other's syscall.
		for k := 0; k < 2; k++ {
			t0 := time.Now()
			if (i+k)%2 == 0 {
				if _, err := l.AppendAsLeader(batch, 1); err != nil {
					b.Fatal(err)
				}
				logTime += time.Since(t0)
			} else {
				if _, err := f.Write(batch); err != nil {
					b.Fatal(err)
				}
				plainTime += time.Since(t0)
			}
		}
	}
	b.ReportMetric(float64(logTime.Nanoseconds())/float64(b.N), "log-ns/op")
	b.ReportMetric(float64(plainTime.Nanoseconds())/float64(b.N), "plain-ns/op")
	b.ReportMetric(100*float64(plainTime)/float64(logTime), "log-%-of-plain")
}

// BenchmarkStorageRead sends 1 MiB fetch regions over a loopback TCP
// connection: FileRegion.WriteTo with sendfile(2) against the pread+write
// copy path, in the same run.
// Run: go test -run XXX -bench BenchmarkStorageRead ./broker/storage
func BenchmarkStorageRead(b *testing.B) {
	batch := benchBatch(b)
	dir := filepath.Join(b.TempDir(), "t-0")
	l, err := OpenLog(LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "t", Partition: 0}, Config: DefaultConfig(), CleanShutdown: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for l.Size() < 32<<20 {
		if _, err := l.AppendAsLeader(batch, 1); err != nil {
			b.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		// A large read buffer keeps the receiver from being the
		// bottleneck (io.Discard reads 8 KiB at a time).
		buf := make([]byte, 1<<20)
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		c.Close()
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	leo := l.LogEndOffset()
	regions := func(b *testing.B, copies int64, send func(r FileRegion) (int64, error)) {
		off := int64(0)
		b.SetBytes(copies << 20)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := l.Read(off, 1<<20, leo, true)
			if err != nil {
				b.Fatal(err)
			}
			r := res.Regions[0]
			if _, err := send(r); err != nil {
				b.Fatal(err)
			}
			off += r.Len / int64(len(batch)) * int64(record.Batch(batch).NumRecords())
			if off >= leo-1000 {
				off = 0
			}
		}
	}
	b.Run("sendfile", func(b *testing.B) {
		regions(b, 1, func(r FileRegion) (int64, error) { return r.WriteTo(conn) })
	})
	b.Run("copy", func(b *testing.B) {
		regions(b, 1, func(r FileRegion) (int64, error) { return r.copyTo(conn, 0) })
	})
	// Alternate the two per region so that load from other processes hits
	// both equally; reports each one's time per MiB and the ratio.
	b.Run("interleaved", func(b *testing.B) {
		var sf, cp time.Duration
		var i int
		regions(b, 2, func(r FileRegion) (int64, error) {
			// Swap the order every region: whichever writes second finds
			// the socket buffer fuller.
			i++
			for k := 0; k < 2; k++ {
				t0 := time.Now()
				if (i+k)%2 == 0 {
					if _, err := r.WriteTo(conn); err != nil {
						return 0, err
					}
					sf += time.Since(t0)
				} else {
					if _, err := r.copyTo(conn, 0); err != nil {
						return 0, err
					}
					cp += time.Since(t0)
				}
			}
			return r.Len, nil
		})
		b.ReportMetric(float64(sf.Nanoseconds())/float64(b.N), "sendfile-ns/op")
		b.ReportMetric(float64(cp.Nanoseconds())/float64(b.N), "copy-ns/op")
		b.ReportMetric(100*float64(cp)/float64(sf), "sendfile-%-of-copy-speed")
	})
	conn.Close()
	<-done
}

// BenchmarkStorageIndexLookup measures an offset index lookup (binary
// search over the in-memory entries) in a full 10 MiB index.
func BenchmarkStorageIndexLookup(b *testing.B) {
	idx, err := OpenOffsetIndex(OSFS{}, filepath.Join(b.TempDir(), "0.index"), 0, 10<<20, true)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.x.close(true, false)
	for i := 0; !idx.IsFull(); i++ {
		if err := idx.Append(int64(i)*10, int32(i)*100); err != nil {
			b.Fatal(err)
		}
	}
	n := int64(idx.Entries())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		target := (int64(i) * 7919) % (n * 10)
		if op := idx.Lookup(target); op.Offset > target {
			b.Fatalf("lookup %d returned %d", target, op.Offset)
		}
	}
}
