package storage

import (
	"errors"
	"fmt"
	"math"
	"os"

	"samsa/broker/record"
)

// errCleaningAborted stops a cleaning pass: the log changed under the
// cleaner (truncation, retention, deletion) or cleaning was paused. The
// log is left as it was; the next pass starts again.
var errCleaningAborted = errors.New("storage: log cleaning aborted")

// errStopScan ends a ScanBatches walk early; it never escapes this file.
var errStopScan = errors.New("storage: stop scan")

// cleanStats are the numbers one cleaning pass reports.
type cleanStats struct {
	segments        int
	bytesRead       int64
	bytesWritten    int64
	recordsRead     int64
	recordsRetained int64
	tombstonesDrop  int64
}

// cleanRun holds one cleaner goroutine's reusable state: the offset map
// and the write buffer (Kafka's Cleaner). Not safe for concurrent use.
type cleanRun struct {
	om      *offsetMap
	ioBuf   []byte
	aborted func() bool // polled between batches; true stops the pass
	stats   cleanStats
	// abortedTxns are the log's aborted transactions for this pass, by
	// producer (offset map); txns the pass's running transaction state
	// (cleaner_txn.go); keptTxns the .txnindex entries of the markers the
	// current group keeps.
	abortedTxns abortedRanges
	txns        *cleanedTxns
	keptTxns    []AbortedTxn
}

// clean compacts the cleanable part of ltc.log once and returns the offset
// up to which it is now clean, the next pass's first dirty offset (Kafka's
// Cleaner.doClean). On errCleaningAborted or any error nothing visible has
// changed except segments already swapped, which are complete.
func (r *cleanRun) clean(ltc *logToClean) (int64, error) {
	l := ltc.log
	cfg := l.Config()
	r.stats = cleanStats{}
	r.om.reset()
	r.txns = newCleanedTxns(ltc.segs)
	r.abortedTxns = newAbortedRanges(r.txns.queue)
	nonActive := ltc.segs[:len(ltc.segs)-1]
	if err := r.buildOffsetMap(segmentsInRange(nonActive, ltc.firstDirty, ltc.firstUncleanable), ltc.firstDirty, ltc.firstUncleanable); err != nil {
		return 0, err
	}
	if testHookCleanerPass != nil {
		testHookCleanerPass("mapped")
	}
	end := r.om.latest + 1
	if end <= ltc.firstDirty {
		return ltc.firstDirty, nil // nothing could be mapped
	}
	// Tombstones may go once their segment is older than the last clean
	// segment's modification time minus delete.retention.ms (Kafka's
	// deleteHorizonMs). With no clean segment yet the horizon is 0, so a
	// first pass keeps every tombstone.
	var horizon int64
	if before := segmentsInRange(nonActive, 0, ltc.firstDirty); len(before) > 0 {
		mt, err := segmentLastModified(before[len(before)-1])
		if err != nil {
			return 0, err
		}
		horizon = mt - cfg.DeleteRetentionMs
	}
	// Every segment below end is rewritten, the clean ones too: their
	// keys may have newer values in the dirty section.
	toClean := segmentsInRange(nonActive, 0, end)
	for _, g := range groupSegmentsBySize(toClean, int64(cfg.SegmentBytes), int64(cfg.SegmentIndexBytes), ltc.firstUncleanable) {
		if err := r.cleanSegments(l, g, horizon, ltc.truncations); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// buildOffsetMap records the latest offset of every key in the batches of
// segs whose offsets lie in [start, end) (Kafka's buildOffsetMap). Only
// whole batches below end are read. When the map fills, it stops there:
// om.latest then marks how far this pass can clean.
func (r *cleanRun) buildOffsetMap(segs []*Segment, start, end int64) error {
	var rec record.Record
	for _, s := range segs {
		size := s.Size()
		full := false
		_, stop, err := ScanBatches(s.log, size, s.base, func(_ int64, b record.Batch) error {
			if r.aborted() {
				return errCleaningAborted
			}
			if b.LastOffset() < start {
				return nil
			}
			if b.LastOffset() >= end {
				return errStopScan
			}
			// Aborted data never shadows an older committed value of
			// its key (Kafka skips aborted batches when mapping).
			if !b.IsControl() && !r.abortedTxns.isAborted(b) {
				it, err := b.Iter(0)
				if err != nil {
					return &CorruptError{Path: s.log.Name(), Pos: -1, Err: err}
				}
				for it.Next(&rec) {
					off := b.BaseOffset() + int64(rec.OffsetDelta)
					if rec.Key == nil || off < start {
						continue
					}
					if !r.om.put(rec.Key, off) {
						full = true
						return errStopScan
					}
				}
				if err := it.Err(); err != nil {
					return &CorruptError{Path: s.log.Name(), Pos: -1, Err: err}
				}
			}
			r.om.updateLatest(b.LastOffset())
			return nil
		})
		if errors.Is(err, errStopScan) {
			return nil
		}
		if err != nil {
			return err
		}
		if stop != nil {
			return &CorruptError{Path: s.log.Name(), Err: stop}
		}
		if full {
			return nil
		}
	}
	return nil
}

// cleanSegments writes the retained batches of group into one
// "<base>.log.cleaned" file, fsyncs it, gives it the last segment's
// modification time, builds its indexes ("<base>.index.cleaned",
// "<base>.timeindex.cleaned") and swaps it in for the group (Kafka's
// Cleaner.cleanSegments). Everything but the swap runs without the log's
// lock.
func (r *cleanRun) cleanSegments(l *Log, group []*Segment, horizon int64, truncations int64) (err error) {
	base := group[0].base
	r.keptTxns = nil
	// The producers whose last batch must stay are read from the log's
	// producer table once per group, as Kafka's cleanSegments reads
	// log.lastRecordsOfActiveProducers: expired producers are not in it.
	producers, ok := l.activeProducerLastOffsets()
	if !ok {
		return errCleaningAborted // the log has no producer state (not loaded)
	}
	cleanedPath := segmentFileName(l.dir, base, LogFileSuffix) + CleanedFileSuffix
	f, err := l.fs.OpenFile(cleanedPath, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return storageError("create cleaned segment", err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			l.fs.Remove(cleanedPath)
		}
	}()
	w := &cleanedWriter{f: f, buf: r.ioBuf[:0]}
	sizes := make([]int64, len(group))
	var lastModified int64
	for i, s := range group {
		sizes[i] = s.Size()
		mt, err := segmentLastModified(s)
		if err != nil {
			return err
		}
		lastModified = mt
		// A segment modified after the horizon keeps its tombstones.
		if err := r.cleanInto(s, sizes[i], w, mt > horizon, producers); err != nil {
			return err
		}
		r.stats.segments++
		r.stats.bytesRead += sizes[i]
	}
	if err := w.flush(); err != nil {
		return err
	}
	r.stats.bytesWritten += w.pos
	// Durable: the cleaned data, before it can replace the originals.
	if err := f.Sync(); err != nil {
		return storageError("sync cleaned segment", err)
	}
	cerr := f.Close()
	f = nil
	if cerr != nil {
		return storageError("close cleaned segment", cerr)
	}
	if err := setModTime(l.fs, cleanedPath, lastModified); err != nil {
		return err
	}
	s, err := openCleanedSegment(l, base, cleanedPath, r.keptTxns)
	if err != nil {
		return err
	}
	if testHookCleanerPass != nil {
		testHookCleanerPass("swap")
	}
	return l.swapCleanedSegment(s, group, sizes, truncations)
}

// cleanInto copies the batches of s (its first size bytes) to w, keeping
// only retained records (Kafka's Cleaner.cleanInto). Untouched batches are
// copied byte for byte; a batch that lost records is rebuilt with its base
// offset, last offset, leader epoch, producer fields and codec.
func (r *cleanRun) cleanInto(s *Segment, size int64, w *cleanedWriter, retainDeletes bool, producers map[int64]lastRecord) error {
	var kept []record.Record
	_, stop, err := ScanBatches(s.log, size, s.base, func(_ int64, b record.Batch) error {
		if r.aborted() {
			return errCleaningAborted
		}
		if b.IsControl() {
			// Kafka 2.8: a marker goes once no batch of its transaction
			// is left and its segment is past the delete horizon (as
			// tombstones); a kept ABORT keeps its .txnindex entry.
			discardable, entry := r.txns.onControlBatch(b)
			if entry != nil {
				r.keptTxns = append(r.keptTxns, *entry)
			}
			if discardable && !retainDeletes && !retainsMarker(producers, b) {
				return nil
			}
			return w.write(b)
		}
		recs, err := b.Records(0)
		if err != nil {
			return &CorruptError{Path: s.log.Name(), Pos: -1, Err: err}
		}
		kept = kept[:0]
		aborted := r.txns.onDataBatch(b)
		for _, rec := range recs {
			if aborted {
				continue // aborted data goes whatever its key
			}
			off := b.BaseOffset() + int64(rec.OffsetDelta)
			if r.shouldRetain(&rec, off, retainDeletes) {
				kept = append(kept, rec)
			} else if rec.Value == nil {
				r.stats.tombstonesDrop++
			}
		}
		r.stats.recordsRead += int64(len(recs))
		r.stats.recordsRetained += int64(len(kept))
		if len(kept) == len(recs) && len(kept) > 0 {
			return w.write(b)
		}
		if len(kept) == 0 {
			// Every record superseded, or an empty batch an earlier pass
			// kept: the batch goes, unless it holds the last sequence of
			// a producer that is still active (Kafka's RETAIN_EMPTY for
			// isBatchLastRecordOfProducer, DELETE_EMPTY otherwise). So a
			// producer's empty batch goes at the first pass after the
			// producer expired or wrote again.
			if !retainsProducerState(producers, b) {
				return nil
			}
			if len(recs) == 0 {
				return w.write(b) // already empty: copied as it is
			}
		}
		nb, err := rebuildBatch(b, kept)
		if err != nil {
			return err
		}
		return w.write(nb)
	})
	if err != nil {
		return err
	}
	if stop != nil {
		return &CorruptError{Path: s.log.Name(), Err: stop}
	}
	return nil
}

// retainsProducerState reports whether b is the last data batch of a
// producer in active (Kafka 2.8's isBatchLastRecordOfProducer with a last
// data offset; markers, its other case, are retainsMarker).
func retainsProducerState(active map[int64]lastRecord, b record.Batch) bool {
	if b.ProducerID() < 0 {
		return false
	}
	last, ok := active[b.ProducerID()]
	return ok && last.dataOffset == b.LastOffset()
}

// shouldRetain is Kafka's Cleaner.shouldRetainRecord (aborted data is dropped before, in cleanInto):
// records past the mapped range stay; otherwise a keyed record stays if it
// is the latest for its key and has a value or tombstones are retained.
// Records without a key are kept (Kafka 2.8 drops them as invalid; they
// can only exist if the topic was switched to compaction later).
func (r *cleanRun) shouldRetain(rec *record.Record, off int64, retainDeletes bool) bool {
	if off > r.om.latest || rec.Key == nil {
		return true
	}
	if off < r.om.get(rec.Key) {
		return false
	}
	return rec.Value != nil || retainDeletes
}

// rebuildBatch re-encodes b with only kept, preserving the batch's base
// offset, last offset delta, partition leader epoch, timestamp type,
// producer id, epoch and base sequence, and codec (Kafka's
// MemoryRecords.buildRetainedRecordsInto). With no records left it writes
// the empty batch Kafka keeps for a producer's last batch.
func rebuildBatch(b record.Batch, kept []record.Record) (record.Batch, error) {
	h := record.BuildHeader{
		BaseOffset:           b.BaseOffset(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		FirstTimestamp:       b.MaxTimestamp(),
		MaxTimestamp:         b.MaxTimestamp(),
		TimestampType:        b.TimestampType(),
		Transactional:        b.IsTransactional(),
		ProducerID:           b.ProducerID(),
		ProducerEpoch:        b.ProducerEpoch(),
		BaseSequence:         b.BaseSequence(),
		LastOffsetDelta:      b.LastOffsetDelta(),
	}
	codec := record.CodecNone
	if len(kept) > 0 {
		codec = b.Compression()
		// The first retained record becomes the timestamp base, as
		// Kafka's builder does; absolute timestamps are unchanged.
		first := b.FirstTimestamp() + kept[0].TimestampDelta
		for i := range kept {
			kept[i].TimestampDelta = b.FirstTimestamp() + kept[i].TimestampDelta - first
		}
		h.FirstTimestamp = first
	}
	nb, err := record.Build(h, kept, codec)
	if err != nil {
		return nil, fmt.Errorf("storage: rebuild batch at offset %d: %w", b.BaseOffset(), err)
	}
	return nb, nil
}

// cleanedWriter appends batches to the .cleaned file through a buffer of
// log.cleaner.io.buffer.size bytes.
type cleanedWriter struct {
	f   File
	buf []byte
	pos int64 // bytes written to f
}

func (w *cleanedWriter) write(b []byte) error {
	if w.pos+int64(len(w.buf))+int64(len(b)) > math.MaxInt32 {
		return fmt.Errorf("storage: cleaned segment would exceed 2 GiB")
	}
	if len(w.buf)+len(b) > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
		if len(b) > cap(w.buf) {
			if _, err := w.f.WriteAt(b, w.pos); err != nil {
				return storageError("write cleaned segment", err)
			}
			w.pos += int64(len(b))
			return nil
		}
	}
	w.buf = append(w.buf, b...)
	return nil
}

func (w *cleanedWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.f.WriteAt(w.buf, w.pos); err != nil {
		return storageError("write cleaned segment", err)
	}
	w.pos += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}
