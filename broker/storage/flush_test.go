package storage

import (
	"path/filepath"
	"testing"
	"time"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// flush.messages: the append that reaches the count fsyncs, and the
// recovery point moves to the log end.
func TestStorageFlushMessages(t *testing.T) {
	cfg := smallConfig()
	cfg.FlushMessages = 5
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), cfg, newFakeClock(), nil)
	defer l.Close()
	for i := 0; i < 2; i++ {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 10, 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	if l.RecoveryPoint() != 0 || l.UnflushedMessages() != 4 {
		t.Fatalf("recovery point %d, unflushed %d before flush.messages", l.RecoveryPoint(), l.UnflushedMessages())
	}
	if _, err := l.AppendAsLeader(testBatch(t, 2, 10, 0), 0); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPoint() != 6 || l.UnflushedMessages() != 0 {
		t.Fatalf("recovery point %d, unflushed %d after flush.messages", l.RecoveryPoint(), l.UnflushedMessages())
	}
}

// flush.ms: the Manager's flusher fsyncs a log whose last flush is older
// than flush.ms; with the default (Long.MAX) nothing is fsynced until a
// roll or Close.
func TestStorageFlushMsByManager(t *testing.T) {
	clock := newFakeClock()
	m := newTestManager(t, []string{t.TempDir()}, clock, func(c *ManagerConfig) { c.FlushCheckInterval = 5 * time.Millisecond })
	defer m.Close()
	cfg := smallConfig()
	cfg.SegmentBytes = 1 << 20
	lazy, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "lazy", Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.FlushMs = 1000
	eager, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "eager", Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*Log{lazy, eager} {
		if _, err := l.AppendAsLeader(testBatch(t, 3, 10, 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(2 * time.Second)
	testwait.For(t, 5*time.Second, func() error {
		if eager.RecoveryPoint() != 3 {
			return errorf("eager recovery point %d", eager.RecoveryPoint())
		}
		return nil
	})
	if lazy.RecoveryPoint() != 0 {
		t.Fatalf("default flush.ms flushed: recovery point %d", lazy.RecoveryPoint())
	}
}

// A roll makes the finished segment durable soon after, in the
// background (Kafka's roll schedules a flush).
func TestStorageFlushAfterRoll(t *testing.T) {
	clock := newFakeClock()
	m := newTestManager(t, []string{t.TempDir()}, clock, nil)
	defer m.Close()
	l, err := m.GetOrCreateLog(kafka.TopicPartition{Topic: "r", Partition: 0}, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	for l.NumSegments() < 3 {
		if _, err := l.AppendAsLeader(testBatch(t, 2, 300, 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	activeBase := l.Segments()[l.NumSegments()-1].BaseOffset()
	testwait.For(t, 5*time.Second, func() error {
		if rp := l.RecoveryPoint(); rp < activeBase {
			return errorf("recovery point %d below active segment base %d", rp, activeBase)
		}
		return nil
	})
}

// A Flush with nothing past the recovery point syncs nothing (Kafka's
// Log.flush returns at offset <= recoveryPoint), nor does one of a new
// empty log (not even its directory): a broker closing thousands of idle
// logs costs no fsync per log. A truncation back to an
// empty log keeps the recovery point low, so the next Flush syncs again.
func TestStorageFlushNothingNewSyncsNothing(t *testing.T) {
	efs := newErrorFS(OSFS{})
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), smallConfig(), newFakeClock(), func(o *LogOptions) { o.FS = efs })
	defer l.Close()
	efs.failAfter(opSync, 0)
	if err := l.Flush(); err != nil {
		t.Fatalf("flush of a new empty log: %v", err)
	}
	efs.heal()
	if _, err := l.AppendAsLeader(testBatch(t, 2, 10, 0), 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	efs.failAfter(opSync, 0) // any fsync from now on fails
	if err := l.Flush(); err != nil {
		t.Fatalf("flush with nothing new: %v", err)
	}
	if l.RecoveryPoint() != 2 {
		t.Fatalf("recovery point %d, want 2", l.RecoveryPoint())
	}
	efs.heal()
	if err := l.TruncateFullyAndStartAt(10); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPoint() > 2 {
		t.Fatalf("recovery point %d after truncating fully, want at most the old 2", l.RecoveryPoint())
	}
	efs.failAfter(opSync, 0)
	if err := l.Flush(); err == nil {
		t.Fatal("flush after a full truncation synced nothing")
	}
}
