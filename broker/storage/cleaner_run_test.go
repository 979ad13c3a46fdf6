package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/internal/testwait"
	"samsa/kafka"
)

// TestStorageCleanerProducerLastBatch checks Kafka's rule for idempotent
// producers: the last batch of a producer survives cleaning, emptied if all
// its records were superseded, so its sequence number is not lost; earlier
// batches of that producer go like any other. The producer's batches carry
// the current time, so it is active (cleaner_producer_test.go covers
// expired producers).
func TestStorageCleanerProducerLastBatch(t *testing.T) {
	root := t.TempDir()
	cfg := cleanerTestConfig()
	l := openCleanerTestLog(t, root, cfg)
	for i, k := range []string{"k1", "k2"} {
		h := record.NewBuildHeader(0, time.Now().UnixMilli())
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = 7, 3, int32(i)
		b, err := record.Build(h, []record.Record{{Key: []byte(k), Value: []byte("a")}}, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"k1", "b", false}, ckv{"k2", "b", false})
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"x", "x", false})
	l.SetHighWatermark(l.LogEndOffset())
	if !cleanOnce(t, newTestCleaner(l)) {
		t.Fatal("nothing cleaned")
	}
	type hdr struct {
		base, last, pid int64
		seq, n          int32
	}
	var got []hdr
	for _, s := range l.Segments() {
		ScanBatches(s.log, s.Size(), s.base, func(_ int64, b record.Batch) error {
			got = append(got, hdr{b.BaseOffset(), b.LastOffset(), b.ProducerID(), b.BaseSequence(), b.NumRecords()})
			return nil
		})
	}
	want := []hdr{{1, 1, 7, 1, 0}, {2, 3, -1, -1, 2}, {4, 4, -1, -1, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batches %+v, want %+v", got, want)
	}
	// The empty batch reloads and reads like any other.
	l.Close()
	l2 := openCleanerTestLog(t, root, cfg)
	if l2.LogEndOffset() != 5 {
		t.Fatalf("LEO %d after reopen", l2.LogEndOffset())
	}
}

// TestStorageCleanerPause checks that a paused log is skipped until
// resumed, with nesting.
func TestStorageCleanerPause(t *testing.T) {
	l := openCleanerTestLog(t, t.TempDir(), cleanerTestConfig())
	buildLastValueLog(t, l, record.CodecNone)
	c := newTestCleaner(l)
	ctx := context.Background()
	if err := c.PauseCleaning(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := c.PauseCleaning(ctx, l); err != nil {
		t.Fatal(err)
	}
	if cleanOnce(t, c) {
		t.Fatal("cleaned a paused log")
	}
	c.ResumeCleaning(l)
	if cleanOnce(t, c) {
		t.Fatal("cleaned a log still paused once")
	}
	c.ResumeCleaning(l)
	if !cleanOnce(t, c) {
		t.Fatal("resumed log not cleaned")
	}
}

// TestStorageCleanerInManager runs the cleaner goroutines under a Manager
// with two log dirs and log.cleaner.threads=2 while producers keep
// appending, then checks each dir's cleaner-offset-checkpoint and that
// Close stops the goroutines.
func TestStorageCleanerInManager(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	ccfg := DefaultCleanerConfig()
	ccfg.Threads = 2
	ccfg.DedupeBufferSize = 1 << 20
	ccfg.Backoff = 5 * time.Millisecond
	cleaner := NewCleaner(CleanerOptions{Config: ccfg, Logger: testLogger(t)})
	m, err := NewManager(ManagerConfig{Dirs: dirs, Logger: testLogger(t), LogConfig: cleanerTestConfig(), Cleaner: cleaner.ManagedService()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	var logs []*Log
	for p := int32(0); p < 2; p++ {
		l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "c", Partition: p}, cleanerTestConfig())
		if err != nil {
			t.Fatal(err)
		}
		buildLastValueLog(t, l, record.CodecNone)
		logs = append(logs, l)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // appends to the active segment race with cleaning
		defer wg.Done()
		for i := 0; i < 200; i++ {
			b, err := record.Build(record.NewBuildHeader(0, 1000), []record.Record{{Key: []byte("hot"), Value: []byte("v")}}, record.CodecNone)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := logs[0].AppendAsLeader(b, 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	testwait.For(t, 10*time.Second, func() error {
		for _, l := range logs {
			cp, err := NewOffsetCheckpointFile(OSFS{}, filepath.Join(filepath.Dir(l.Dir()), CleanerOffsetCheckpointFile)).Read()
			if err != nil {
				return err
			}
			if cp[l.TopicPartition()] != 5 {
				return errorf("%s checkpoint %v", l.TopicPartition(), cp)
			}
		}
		return nil
	})
	wg.Wait()
	for _, l := range logs {
		if got := readRecords(t, l)[:4]; !reflect.DeepEqual(got, compactedLastValue[:4]) {
			t.Fatalf("%s: %v", l.TopicPartition(), got)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Stopped: Stop again returns at once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := cleaner.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStorageCleanerUncleanable checks that a log whose data fails a pass
// (here a batch with a bad CRC) is reported and skipped afterwards instead
// of failing every backoff, and that nothing is rewritten.
func TestStorageCleanerUncleanable(t *testing.T) {
	l := openCleanerTestLog(t, t.TempDir(), cleanerTestConfig())
	buildLastValueLog(t, l, record.CodecNone)
	seg := l.Segments()[1]
	f, err := os.OpenFile(seg.logPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, seg.Size()-2); err != nil { // inside the last record
		t.Fatal(err)
	}
	f.Close()
	c := newTestCleaner(l)
	if _, err := c.CleanOnce(context.Background()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("CleanOnce = %v, want ErrCorrupt", err)
	}
	if got := c.UncleanablePartitions(); len(got) != 1 || got[0] != (kafka.TopicPartition{Topic: "t", Partition: 0}) {
		t.Fatalf("uncleanable %v", got)
	}
	if cleanOnce(t, c) {
		t.Fatal("uncleanable log cleaned again")
	}
	assertNoCleanerLeftovers(t, l.Dir())
}

// TestStorageCleanerPauseWaitsForPass checks that PauseCleaning waits for a
// pass in progress (Kafka's abortAndPauseCleaning blocks the same way) and
// gives up when its context ends.
func TestStorageCleanerPauseWaitsForPass(t *testing.T) {
	l := openCleanerTestLog(t, t.TempDir(), cleanerTestConfig())
	buildLastValueLog(t, l, record.CodecNone)
	c := newTestCleaner(l)
	entered, release := make(chan struct{}), make(chan struct{})
	testHookCleanerSwap = func(stage string) error {
		if stage == "cleaned" {
			close(entered)
			<-release
		}
		return nil
	}
	t.Cleanup(func() { testHookCleanerSwap = nil })
	done := make(chan error, 1)
	go func() {
		_, err := c.CleanOnce(context.Background())
		done <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.PauseCleaning(ctx, l); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PauseCleaning during a pass = %v, want DeadlineExceeded", err)
	}
	paused := make(chan error, 1)
	go func() { paused <- c.PauseCleaning(context.Background(), l) }()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
	testHookCleanerSwap = nil
	// Paused twice (the timed-out call still counts): two resumes needed.
	appendBatch(t, l, record.CodecNone, 1000, ckv{"k1", "d", false})
	mustRoll(t, l)
	appendBatch(t, l, record.CodecNone, 1000, ckv{"z", "z", false})
	l.SetHighWatermark(l.LogEndOffset())
	c.ResumeCleaning(l)
	if cleanOnce(t, c) {
		t.Fatal("cleaned while still paused")
	}
	c.ResumeCleaning(l)
	if !cleanOnce(t, c) {
		t.Fatal("not cleaned after resuming")
	}
}
