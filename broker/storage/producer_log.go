package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/sirupsen/logrus"

	"samsa/broker/record"
)

// DefaultProducerIDExpirationMs is Kafka 2.8's transactional.id.expiration.ms
// default (7 days), the idle time after which a producer's state expires.
const DefaultProducerIDExpirationMs = 7 * 24 * 3600 * 1000

// ProducerStates returns a copy of the partition's producer table, sorted
// by producer id (Kafka's ProducerStateManager.activeProducers).
func (l *Log) ProducerStates() []ProducerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.producers == nil {
		return nil
	}
	return l.mu.producers.entries()
}

// ProducerSnapshotOffsets returns the offsets of the producer snapshot
// files in the partition directory, ascending.
func (l *Log) ProducerSnapshotOffsets() ([]int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return listProducerSnapshots(l.fs, l.dir)
}

// RemoveExpiredProducers drops the state of producers whose last batch is
// older than the expiration (transactional.id.expiration.ms, Kafka 2.8's
// removeExpiredProducers) and returns how many it dropped. Retention calls
// it on every pass.
func (l *Log) RemoveExpiredProducers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.removeExpiredProducersLocked()
}

func (l *Log) removeExpiredProducersLocked() int {
	if l.mu.producers == nil {
		return 0
	}
	return l.mu.producers.removeExpired(l.now().UnixMilli(), producerExpirationMs(l.Config()))
}

// activeProducerLastOffsets maps every producer in the table that has not
// expired by the log's clock to the last offset of its last data batch, or
// -1 when only a marker of it is known, and its epoch (Kafka 2.8's
// Log.lastRecordsOfActiveProducers, LastRecord; the cleaner then keeps its
// markers of that epoch). The cleaner
// keeps exactly these batches, emptied if need be, so that a restart or a
// retried batch finds the producer's last sequence and offsets; an
// expired producer's batches are cleaned like any other. An entry that
// has expired but that retention has not yet removed counts as expired:
// a load would drop it too. ok is false before the table is loaded.
func (l *Log) activeProducerLastOffsets() (active map[int64]lastRecord, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.mu.producers
	if ps == nil {
		return nil, false
	}
	nowMs, expMs := l.now().UnixMilli(), producerExpirationMs(l.Config())
	active = make(map[int64]lastRecord, len(ps.producers))
	for pid, e := range ps.producers {
		if !producerExpired(e, nowMs, expMs) {
			active[pid] = lastRecord{dataOffset: e.lastDataOffset(), epoch: e.Epoch} // -1: only a marker
		}
	}
	return active, true
}

func producerExpirationMs(c Config) int64 {
	if c.ProducerIDExpirationMs <= 0 {
		return DefaultProducerIDExpirationMs
	}
	return c.ProducerIDExpirationMs
}

// loadProducerStateLocked builds the producer table at open (Kafka 2.8
// Log.loadProducerState) from the latest snapshot and the batches after
// it; snaps are the snapshot offsets the directory listing found. After a
// clean shutdown with no snapshot at all the log holds no producer state
// worth a full scan (it predates snapshots, as Kafka assumes after an
// upgrade), so the table starts empty at the end.
func (l *Log) loadProducerStateLocked(cleanShutdown bool, snaps []int64) error {
	l.mu.producers = newProducerState()
	end := l.end.Load().offset
	sort.Slice(snaps, func(i, j int) bool { return snaps[i] < snaps[j] })
	indexFrom := l.mu.txnIndexRebuildFrom
	if len(snaps) == 0 && cleanShutdown && indexFrom == noTxnIndexRebuild {
		l.mu.producers.reset(end)
		return nil
	}
	if indexFrom != noTxnIndexRebuild {
		l.logger.WithField("offset", indexFrom).Info("storage: rebuilding transaction indexes from the log")
		if err := l.resetTxnIndexesFromLocked(indexFrom); err != nil {
			return err
		}
	}
	if err := l.rebuildFromSnapshotsLocked(end, snaps, indexFrom); err != nil {
		return err
	}
	// Snapshot what the replay learned, so the next start reads less. A
	// failure only costs that replay again: it must not fail the load
	// (which would take the whole log dir offline).
	if err := l.takeProducerSnapshotLocked(true); err != nil {
		l.logger.WithError(err).WithField("offset", end).Warn("storage: writing producer snapshot at load failed")
	}
	return nil
}

// rebuildProducerStateLocked reloads the table for a log ending at end
// (Kafka's truncateAndReload followed by the log replay): snapshots past
// end or below the log start are deleted, the latest remaining one that
// reads back is loaded without expired producers, and the batches from
// its offset to end are replayed. Corrupt snapshots are deleted and an
// older one is tried.
func (l *Log) rebuildProducerStateLocked(end int64) error {
	if l.mu.producers == nil {
		return nil
	}
	snaps, err := listProducerSnapshots(l.fs, l.dir)
	if err != nil {
		return err
	}
	return l.rebuildFromSnapshotsLocked(end, snaps, noTxnIndexRebuild)
}

// rebuildFromSnapshotsLocked is rebuildProducerStateLocked given the
// snapshot offsets on disk, ascending. With indexFrom below MaxInt64 (a
// load that reset the .txnindex of the segments from indexFrom on) only
// snapshots at or below indexFrom are used, and the replay re-adds the
// aborted transactions whose marker is at or after indexFrom, as Kafka's
// recoverSegment rebuilds the producer state up to a recovered segment's
// base and rescans it.
func (l *Log) rebuildFromSnapshotsLocked(end int64, all []int64, indexFrom int64) error {
	ps := l.mu.producers
	start := l.logStartOffset.Load()
	var snaps []int64
	for _, o := range all {
		if o > end || o < start {
			if err := l.removeProducerSnapshotLocked(o); err != nil {
				return err
			}
			continue
		}
		if o <= indexFrom {
			snaps = append(snaps, o)
		}
	}
	ps.reset(start)
	nowMs, expMs := l.now().UnixMilli(), producerExpirationMs(l.Config())
	for i := len(snaps) - 1; i >= 0; i-- {
		o := snaps[i]
		entries, err := readProducerSnapshot(l.fs, l.dir, o)
		if errors.Is(err, ErrCorruptProducerSnapshot) {
			l.logger.WithError(err).WithField("offset", o).Warn("storage: deleting unreadable producer snapshot")
			if err := l.removeProducerSnapshotLocked(o); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !producerExpired(&e, nowMs, expMs) {
				ps.producers[e.ProducerID] = e.clone()
			}
		}
		ps.mapEndOffset, ps.lastSnapOffset = o, o
		break
	}
	ps.rebuildUnstable()
	from := max(ps.mapEndOffset, start)
	n, err := l.replayProducerBatchesLocked(from, end, indexFrom)
	if err != nil {
		return err
	}
	ps.mapEndOffset = end
	l.publishUnstableLocked()
	l.logger.WithFields(logrus.Fields{"snapshot": ps.lastSnapOffset, "offset": end, "batches": n,
		"producers": len(ps.producers)}).Debug("storage: loaded producer state")
	return nil
}

// removeProducerSnapshotLocked deletes the snapshot at offset o.
func (l *Log) removeProducerSnapshotLocked(o int64) error {
	if err := l.fs.Remove(producerSnapshotPath(l.dir, o)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storageError("remove producer snapshot", err)
	}
	l.mu.dirDirty = true
	return nil
}

// replayProducerBatchesLocked applies the headers of the batches in
// [from, end) to the producer table, reading only batch headers (and the
// record of control batches). Aborted transactions whose marker is at or
// after indexFrom are added to the .txnindex of the marker's segment. It
// returns how many batches it read.
func (l *Log) replayProducerBatchesLocked(from, end, indexFrom int64) (int, error) {
	if from >= end {
		return 0, nil
	}
	segs := *l.segments.Load()
	n := 0
	var hr headerReader
	defer hr.release()
	for i, s := range segs {
		if s.base >= end {
			break
		}
		if i+1 < len(segs) && segs[i+1].base <= from {
			continue
		}
		size := s.Size()
		if l.end.Load().seg == s {
			size = l.end.Load().pos
		}
		pos := int64(0)
		if from > s.base {
			p, _, found, err := s.translateOffset(from, size)
			if err != nil {
				return n, err
			}
			if !found {
				continue
			}
			pos = p
		}
		hr.reset(s.log, size)
		for pos < size {
			h, err := hr.at(pos)
			if err != nil {
				return n, s.corruptAt(pos, err)
			}
			if pos+h.Size() > size {
				return n, s.corruptAt(pos, fmt.Errorf("batch of %d bytes crosses end %d", h.Size(), size))
			}
			if h.BaseOffset >= end {
				break
			}
			if h.LastOffset() >= from {
				var m *record.EndTxnMarker
				if h.IsControl() && h.ProducerID >= 0 {
					mk, ok, err := markerOf(s.log, pos, h)
					if err != nil {
						return n, s.corruptAt(pos, err)
					}
					if ok {
						m = &mk
					}
				}
				if c, done := l.mu.producers.applyBatch(h, m); done && c.last >= indexFrom {
					if err := l.onCompletedTxnLocked(s, c); err != nil {
						return n, err
					}
				}
				n++
			}
			pos += h.Size()
		}
	}
	return n, nil
}

// takeProducerSnapshotLocked writes the table as the snapshot at its end
// offset unless one was written there already (Kafka's takeSnapshot), and
// makes the file durable (fsynced), and its name too with syncDir; without
// it the directory is marked for the next flush. Its error must never
// reach failLocked: a snapshot is an optimisation of the next load.
func (l *Log) takeProducerSnapshotLocked(syncDir bool) error {
	ps := l.mu.producers
	if ps == nil || ps.mapEndOffset <= ps.lastSnapOffset {
		return nil
	}
	if err := writeProducerSnapshot(l.fs, l.dir, ps.mapEndOffset, ps.entries(), syncDir); err != nil {
		return err // not a log failure: the caller logs it
	}
	ps.lastSnapOffset = ps.mapEndOffset
	if !syncDir {
		l.mu.dirDirty = true
	}
	return nil
}

// onRollProducerStateLocked snapshots the table at newBase, the offset a
// new segment starts at (Kafka's roll: updateMapEndOffset, takeSnapshot).
// A failed snapshot is only logged: the log stays the durable record. The
// file is fsynced here (in the append path, as Kafka's roll does); its
// name becomes durable with the new segment's at the roll's flush.
func (l *Log) onRollProducerStateLocked(newBase int64) {
	if l.mu.producers == nil {
		return
	}
	l.mu.producers.mapEndOffset = max(l.mu.producers.mapEndOffset, newBase)
	if err := l.takeProducerSnapshotLocked(false); err != nil {
		l.logger.WithError(err).WithField("offset", newBase).Warn("storage: writing producer snapshot failed")
	}
}

// onCloseProducerStateLocked snapshots the table at the log end on a clean
// close (Kafka's Log.close), durably, so the next start replays nothing. A
// failure is logged and returned: Close reports it so that the Manager
// does not write .kafka_cleanshutdown, and the next start replays the
// producers from the log instead of trusting a missing snapshot. It does
// not fail the log.
func (l *Log) onCloseProducerStateLocked() error {
	if l.mu.producers == nil || l.mu.failed != nil {
		return nil
	}
	if err := l.takeProducerSnapshotLocked(true); err != nil {
		l.logger.WithError(err).Warn("storage: writing producer snapshot at close failed")
		return err
	}
	return nil
}

// onSegmentsDeletedProducerStateLocked deletes the snapshots of segments
// that left the head of the log (Kafka deletes a segment's snapshot with
// it) and moves the table's end up to the log start if it lags.
func (l *Log) onSegmentsDeletedProducerStateLocked() error {
	if l.mu.producers == nil {
		return nil
	}
	first := (*l.segments.Load())[0].base
	if start := l.logStartOffset.Load(); l.mu.producers.mapEndOffset < start {
		l.mu.producers.mapEndOffset = start
	}
	return deleteProducerSnapshots(l.fs, l.dir, func(o int64) bool { return o < first })
}

// onTruncateFullyProducerStateLocked empties the table and deletes every
// snapshot (Kafka's truncateFullyAndStartAt).
func (l *Log) onTruncateFullyProducerStateLocked(offset int64) error {
	if l.mu.producers == nil {
		return nil
	}
	l.mu.producers.reset(offset)
	l.publishUnstableLocked()
	return deleteProducerSnapshots(l.fs, l.dir, func(int64) bool { return true })
}

// checkLeaderProducersLocked validates a client append's idempotent
// batches; see producerState.checkLeaderBatches.
func (l *Log) checkLeaderProducersLocked(headers []record.BatchHeader) (producerCheck, error) {
	if l.mu.producers == nil {
		return producerCheck{}, nil
	}
	return l.mu.producers.checkLeaderBatches(l.tp, headers)
}

// onAppendProducerStateLocked records appended batches (offsets assigned)
// and the new end. markers holds the end-transaction marker of each
// control batch by position (nil: the append has none). An aborted
// transaction is indexed in the active segment, which holds the marker;
// failing that write fails the log.
func (l *Log) onAppendProducerStateLocked(headers []record.BatchHeader, markers []*record.EndTxnMarker, next int64) error {
	ps := l.mu.producers
	if ps == nil {
		return nil
	}
	changed := false
	for i, h := range headers {
		var m *record.EndTxnMarker
		if markers != nil {
			m = markers[i]
		}
		txnBefore := len(ps.unstable)
		c, done := ps.applyBatch(h, m)
		if done {
			changed = true
			if err := l.onCompletedTxnLocked(l.activeLocked(), c); err != nil {
				return l.failLocked(err)
			}
		} else if len(ps.unstable) != txnBefore {
			changed = true
		}
	}
	ps.mapEndOffset = next
	if changed {
		l.publishUnstableLocked()
	}
	return nil
}
