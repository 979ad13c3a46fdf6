package storage

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"samsa/kafka"
)

// LogOptions configure OpenLog. The Manager fills them from its checkpoint
// files; tests may open a Log directly.
type LogOptions struct {
	Dir    string // the partition directory, "<log dir>/<topic>-<partition>"
	TP     kafka.TopicPartition
	Config Config
	FS     FS                 // nil: OSFS
	Logger logrus.FieldLogger // nil: discard
	Now    func() time.Time   // nil: time.Now

	// CleanShutdown skips recovery: the log dir had .kafka_cleanshutdown.
	CleanShutdown bool
	// RecoveryPoint is the checkpointed offset below which every segment
	// was flushed; recovery re-reads segments from the one holding it.
	RecoveryPoint int64
	// LogStartOffset and HighWatermark are the checkpointed values (0 when
	// unknown); both are clamped to the loaded log.
	LogStartOffset int64
	HighWatermark  int64

	// ScheduleDelete runs fn after delay; the Manager passes its timer so
	// that segments renamed ".deleted" stay readable for
	// file.delete.delay.ms. nil deletes at once.
	ScheduleDelete func(delay time.Duration, fn func())
	// OnRoll is called (under the log's lock; it must not block or call
	// back into the log) after a new segment was rolled; the Manager
	// uses it to flush the finished segment in the background as Kafka
	// does. nil: nothing.
	OnRoll func(l *Log)
	// OnLogStartMoved is called (under the log's lock; it must not block
	// or call back into the log) after the log start offset moved forward
	// (retention, DeleteRecords, a full truncation); the broker tells the
	// fetch sessions (broker/fetchsession), whose incremental answers
	// carry the new offset. nil: nothing.
	OnLogStartMoved func(tp kafka.TopicPartition)
	// OnFailure is called once, under the log's lock, when a disk error
	// takes the log offline; the Manager marks the log dir offline
	// (KIP-112). It must not block or call back into the log.
	OnFailure func(l *Log, err error)
	// OnTruncate is called under the log's lock when TruncateTo or
	// TruncateFullyAndStartAt is about to remove batches, before any file
	// changes, with the offset below which the log keeps its data (the base
	// of the segment that becomes active, or the new start offset). The
	// Manager lowers the cleaner checkpoint there (Kafka's
	// maybeTruncateCheckpoint); an error fails the truncation and takes the
	// log offline. It must not call back into the log. nil: nothing.
	OnTruncate func(l *Log, offset int64) error
}

// logEnd is the log end offset with its place in the file, published
// atomically after each append so readers need no lock (Kafka's
// LogOffsetMetadata for nextOffsetMetadata).
type logEnd struct {
	offset int64
	seg    *Segment
	pos    int64 // segment size at offset
	// recent is an immutable view of the places of seg's last batches,
	// ending at pos and offset (recent_batches.go), or nil.
	recent []batchPlace
}

// Log is one partition's log (Kafka's Log): an ordered list of segments,
// the last of which ("active") takes appends.
//
// Concurrency: appends, truncations, rolls, retention and Close are
// serialised by mu (STYLE S6.4). LogEndOffset, LogStartOffset,
// HighWatermark and Read are lock-free: they read atomics and the
// copy-on-write segment list. Flush takes flushMu, never mu during fsync.
type Log struct {
	dir    string // immutable
	tp     kafka.TopicPartition
	fs     FS
	logger logrus.FieldLogger
	now    func() time.Time

	scheduleDelete func(time.Duration, func())
	onRoll         func(*Log)
	onStartMoved   func(kafka.TopicPartition)
	onFailure      func(*Log, error)
	onTruncate     func(*Log, int64) error

	epochs *LeaderEpochCache // internally locked

	segments       atomic.Pointer[[]*Segment] // sorted by base; replaced under mu
	end            atomic.Pointer[logEnd]
	logStartOffset atomic.Int64
	highWatermark  atomic.Int64
	recoveryPoint  atomic.Int64
	config         atomic.Pointer[Config]
	// truncations counts truncations (written under mu, read anywhere), so
	// a flush and the cleaner can tell that offsets they saw were replaced.
	truncations atomic.Int64
	// unstable is a copy of the producer table's unstable transactions
	// (producer_txn.go), nil when there are none; replaced under mu and
	// read lock-free by LastStableOffset.
	unstable atomic.Pointer[[]unstableTxn]

	flushMu sync.Mutex // serialises flushes

	mu struct {
		sync.Mutex
		closed            bool
		failed            error // sticky disk failure; appends refused
		unflushedMessages int64
		lastFlush         time.Time
		dirDirty          bool           // files created or renamed since the last dir fsync
		producers         *producerState // idempotent producers' state (producer_log.go)
		// txnIndexRebuildFrom is, during load, the lowest base of a
		// segment whose .txnindex was reset by recovery (MaxInt64: none);
		// the producer-state replay re-adds entries from there.
		txnIndexRebuildFrom int64
	}
}

// OpenLog loads (and, after an unclean shutdown, recovers) the log in
// opts.Dir, creating the directory if needed.
func OpenLog(opts LogOptions) (*Log, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	defaultDeps(&opts.FS, &opts.Now, &opts.Logger)
	l := &Log{
		dir:            opts.Dir,
		tp:             opts.TP,
		fs:             opts.FS,
		logger:         opts.Logger.WithFields(logrus.Fields{"component": "storage", "topic": opts.TP.Topic, "partition": opts.TP.Partition}),
		now:            opts.Now,
		scheduleDelete: opts.ScheduleDelete,
		onRoll:         opts.OnRoll,
		onStartMoved:   opts.OnLogStartMoved,
		onFailure:      opts.OnFailure,
		onTruncate:     opts.OnTruncate,
	}
	cfg := opts.Config
	l.config.Store(&cfg)
	if err := l.fs.MkdirAll(l.dir, 0o755); err != nil {
		return nil, storageError("create log dir", err)
	}
	epochs, err := NewLeaderEpochCache(l.fs, l.dir, l.logger)
	if err != nil {
		return nil, err
	}
	l.epochs = epochs
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.lastFlush = l.now()
	if err := l.loadLocked(opts); err != nil {
		l.closeSegmentsLocked()
		return nil, err
	}
	return l, nil
}

// TopicPartition returns the partition this log holds.
func (l *Log) TopicPartition() kafka.TopicPartition { return l.tp }

// Dir returns the partition directory.
func (l *Log) Dir() string { return l.dir }

// Config returns the log's current settings.
func (l *Log) Config() Config { return *l.config.Load() }

// SetConfig replaces the settings (a topic config change). Rolling and
// retention use the new values from their next run.
func (l *Log) SetConfig(c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	l.config.Store(&c)
	return nil
}

// LeaderEpochCache returns the partition's leader-epoch cache.
func (l *Log) LeaderEpochCache() *LeaderEpochCache { return l.epochs }

// EndOffsetForEpoch answers OffsetsForLeaderEpoch (KIP-101, KIP-279): the
// largest epoch <= epoch known to the log and the end offset of that
// epoch (the log end offset for the latest epoch), or UndefinedEpoch /
// UndefinedEpochOffset.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return l.epochs.EndOffsetFor(epoch, l.LogEndOffset())
}

// LogStartOffset returns the first offset a consumer may read (lock-free).
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// setLogStartLocked stores a new log start offset and tells OnLogStartMoved.
func (l *Log) setLogStartLocked(offset int64) {
	l.logStartOffset.Store(offset)
	if l.onStartMoved != nil {
		l.onStartMoved(l.tp)
	}
}

// LogEndOffset returns the offset the next appended record gets
// (lock-free).
func (l *Log) LogEndOffset() int64 { return l.end.Load().offset }

// HighWatermark returns the high watermark (lock-free).
func (l *Log) HighWatermark() int64 { return l.highWatermark.Load() }

// SetHighWatermark sets the high watermark, clamped to [LogStartOffset,
// LogEndOffset] as Kafka does, and returns the value stored.
func (l *Log) SetHighWatermark(hw int64) int64 {
	hw = min(max(hw, l.LogStartOffset()), l.LogEndOffset())
	l.highWatermark.Store(hw)
	return hw
}

// RecoveryPoint returns the offset below which every batch was fsynced.
func (l *Log) RecoveryPoint() int64 { return l.recoveryPoint.Load() }

// Segments returns a snapshot of the segments, oldest first. The slice is
// the caller's; the segments are shared and must not be mutated.
func (l *Log) Segments() []*Segment {
	return append([]*Segment(nil), *l.segments.Load()...)
}

// NumSegments returns the number of segments.
func (l *Log) NumSegments() int { return len(*l.segments.Load()) }

// Size returns the bytes in all segment files.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range *l.segments.Load() {
		n += s.Size()
	}
	return n
}

// activeLocked returns the last segment.
func (l *Log) activeLocked() *Segment {
	segs := *l.segments.Load()
	return segs[len(segs)-1]
}

// publishSegmentsLocked installs a new segment list.
func (l *Log) publishSegmentsLocked(segs []*Segment) {
	sort.Slice(segs, func(i, j int) bool { return segs[i].base < segs[j].base })
	l.segments.Store(&segs)
}

// publishEndLocked publishes the log end offset after the bytes it covers
// were written, then clamps the high watermark and recovery point.
func (l *Log) publishEndLocked(offset int64) {
	seg := l.activeLocked()
	size := seg.Size()
	l.end.Store(&logEnd{offset: offset, seg: seg, pos: size, recent: seg.recent.view(size, offset)})
	if l.highWatermark.Load() > offset {
		l.highWatermark.Store(offset)
	}
	if l.recoveryPoint.Load() > offset {
		l.recoveryPoint.Store(offset)
	}
}

// checkWritableLocked refuses mutations of a closed or failed log.
func (l *Log) checkWritableLocked() error {
	if l.mu.closed {
		return ErrClosed
	}
	if l.mu.failed != nil {
		return fmt.Errorf("storage: %s is offline after an earlier failure: %w", l.tp, l.mu.failed)
	}
	return nil
}

// failLocked records a disk failure: the log stops taking appends (Kafka
// takes the whole log dir offline), so nothing is acknowledged that might
// not be on disk.
func (l *Log) failLocked(err error) error {
	if err != nil && l.mu.failed == nil && errors.Is(err, ErrStorage) {
		l.mu.failed = err
		l.logger.WithError(err).Error("storage: log failed; refusing further appends")
		if l.onFailure != nil {
			l.onFailure(l, err)
		}
	}
	return err
}

// Failed returns the disk error that took the log offline, or nil.
func (l *Log) Failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.failed
}

// Close flushes nothing (the Manager flushes before closing, as Kafka's
// LogManager.shutdown does), trims the active segment's files and closes
// every file. It returns an error if the producer snapshot or any close
// failed or the log had failed, so the caller does not write the
// clean-shutdown marker.
func (l *Log) Close() error { return l.close(true) }

// closeForDelete is Close for a log about to be deleted (Manager.DeleteLog):
// no producer snapshot is written (its fsyncs would only slow down
// deleting many partitions).
func (l *Log) closeForDelete() error { return l.close(false) }

func (l *Log) close(snapshot bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	var err error
	if snapshot {
		err = l.onCloseProducerStateLocked()
		if l.mu.failed == nil {
			// A clean restart does not recover, so the epochs the last
			// Flush did not write must be in the file (usually nothing:
			// Manager.Close flushes every log first).
			err = errors.Join(err, l.epochs.Flush())
		}
	}
	l.mu.closed = true
	err = errors.Join(err, l.closeSegmentsLocked())
	if l.mu.failed != nil {
		err = errors.Join(err, l.mu.failed)
	}
	return err
}

func (l *Log) closeSegmentsLocked() error {
	p := l.segments.Load()
	if p == nil {
		return nil
	}
	var err error
	end := l.end.Load()
	for _, s := range *p {
		if end != nil && s == end.seg && (s.Size() > end.pos || l.mu.failed != nil) {
			// A failed append left bytes past the published end: cut
			// them so that a later clean start does not read them.
			if terr := s.log.Truncate(end.pos); terr == nil {
				s.size.Store(end.pos)
			}
		}
		err = errors.Join(err, s.closeLocked())
	}
	return err
}

// Delete closes the log and removes its directory.
func (l *Log) Delete() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mu.closed {
		l.mu.closed = true
		for _, s := range *l.segments.Load() {
			s.closeHandles()
		}
	}
	if err := l.fs.RemoveAll(l.dir); err != nil {
		return storageError("delete log", err)
	}
	return nil
}
