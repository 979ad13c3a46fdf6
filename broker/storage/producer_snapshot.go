package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"

	"samsa/broker/record"
)

// ProducerSnapshotFileSuffix names producer-state snapshots,
// "<20-digit offset>.snapshot" (Kafka's Log.ProducerSnapshotFileSuffix).
const ProducerSnapshotFileSuffix = ".snapshot"

// Layout of a producer snapshot (Kafka 2.8 ProducerStateManager schema
// version 1), big-endian:
//
//	version  int16   (1)
//	crc      uint32  CRC-32C of every byte after this field
//	count    int32   number of entries
//	entries  count × 46 bytes:
//	  producer_id              int64
//	  epoch                    int16
//	  last_sequence            int32
//	  last_offset              int64
//	  offset_delta             int32  last offset - first offset of the last batch
//	  timestamp                int64  max timestamp of the last batch
//	  coordinator_epoch        int32
//	  current_txn_first_offset int64  -1: no open transaction
const (
	producerSnapshotVersion   = 1
	producerSnapshotCRCOffset = 2
	producerSnapshotDataStart = producerSnapshotCRCOffset + 4
	producerSnapshotEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
	// maxProducerSnapshotBytes bounds a snapshot read into memory (about
	// 5.8 million producers).
	maxProducerSnapshotBytes = 256 << 20
)

// ErrCorruptProducerSnapshot marks a snapshot that fails its checks; the
// log deletes it and rebuilds the state from an older one and the log.
var ErrCorruptProducerSnapshot = fmt.Errorf("%w: producer snapshot", ErrCorrupt)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeProducerSnapshot returns the snapshot file content for entries, in
// the given order.
func EncodeProducerSnapshot(entries []ProducerEntry) []byte {
	buf := make([]byte, producerSnapshotDataStart+4+len(entries)*producerSnapshotEntrySize)
	binary.BigEndian.PutUint16(buf, producerSnapshotVersion)
	binary.BigEndian.PutUint32(buf[producerSnapshotDataStart:], uint32(len(entries)))
	p := buf[producerSnapshotDataStart+4:]
	for _, e := range entries {
		lastSeq, lastOffset, delta := record.NoSequence, int64(-1), int32(0)
		if n := len(e.Batches); n > 0 {
			b := e.Batches[n-1]
			lastSeq, lastOffset, delta = b.LastSeq, b.LastOffset, int32(b.LastOffset-b.FirstOffset)
		}
		binary.BigEndian.PutUint64(p[0:], uint64(e.ProducerID))
		binary.BigEndian.PutUint16(p[8:], uint16(e.Epoch))
		binary.BigEndian.PutUint32(p[10:], uint32(lastSeq))
		binary.BigEndian.PutUint64(p[14:], uint64(lastOffset))
		binary.BigEndian.PutUint32(p[22:], uint32(delta))
		binary.BigEndian.PutUint64(p[26:], uint64(e.LastTimestamp))
		binary.BigEndian.PutUint32(p[34:], uint32(e.CoordinatorEpoch))
		binary.BigEndian.PutUint64(p[38:], uint64(e.CurrentTxnFirstOffset))
		p = p[producerSnapshotEntrySize:]
	}
	binary.BigEndian.PutUint32(buf[producerSnapshotCRCOffset:], crc32.Checksum(buf[producerSnapshotDataStart:], castagnoli))
	return buf
}

// DecodeProducerSnapshot parses a snapshot file's content. Each entry
// keeps only its last batch (as Kafka restores it); an entry whose
// last_offset is negative has none. Errors wrap ErrCorruptProducerSnapshot:
// unknown version, CRC mismatch, a count that does not match the length,
// or a negative offset delta. It never panics and allocates at most one
// entry per 46 input bytes.
func DecodeProducerSnapshot(data []byte) ([]ProducerEntry, error) {
	if len(data) < producerSnapshotDataStart+4 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorruptProducerSnapshot, len(data))
	}
	if v := int16(binary.BigEndian.Uint16(data)); v != producerSnapshotVersion {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorruptProducerSnapshot, v)
	}
	stored := binary.BigEndian.Uint32(data[producerSnapshotCRCOffset:])
	if got := crc32.Checksum(data[producerSnapshotDataStart:], castagnoli); got != stored {
		return nil, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptProducerSnapshot, stored, got)
	}
	count := int32(binary.BigEndian.Uint32(data[producerSnapshotDataStart:]))
	p := data[producerSnapshotDataStart+4:]
	if count < 0 || int64(count)*producerSnapshotEntrySize != int64(len(p)) {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrCorruptProducerSnapshot, count, len(p))
	}
	out := make([]ProducerEntry, 0, count)
	for ; len(p) > 0; p = p[producerSnapshotEntrySize:] {
		e := ProducerEntry{
			ProducerID:            int64(binary.BigEndian.Uint64(p[0:])),
			Epoch:                 int16(binary.BigEndian.Uint16(p[8:])),
			LastTimestamp:         int64(binary.BigEndian.Uint64(p[26:])),
			CoordinatorEpoch:      int32(binary.BigEndian.Uint32(p[34:])),
			CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(p[38:])),
		}
		lastSeq := int32(binary.BigEndian.Uint32(p[10:]))
		lastOffset := int64(binary.BigEndian.Uint64(p[14:]))
		delta := int32(binary.BigEndian.Uint32(p[22:]))
		if lastOffset >= 0 {
			if delta < 0 || int64(delta) > lastOffset {
				return nil, fmt.Errorf("%w: producer %d has offset delta %d at offset %d",
					ErrCorruptProducerSnapshot, e.ProducerID, delta, lastOffset)
			}
			e.Batches = []ProducerBatch{{
				FirstSeq: decrementSequence(lastSeq, delta), LastSeq: lastSeq,
				FirstOffset: lastOffset - int64(delta), LastOffset: lastOffset, Timestamp: e.LastTimestamp,
			}}
		}
		out = append(out, e)
	}
	return out, nil
}

// decrementSequence is Kafka's DefaultRecordBatch.decrementSequence: seq
// minus n, wrapping below 0 to MaxInt32.
func decrementSequence(seq, n int32) int32 {
	if seq < n {
		return int32(int64(math.MaxInt32) - int64(n-seq) + 1)
	}
	return seq - n
}

// producerSnapshotPath returns dir/<20-digit offset>.snapshot.
func producerSnapshotPath(dir string, offset int64) string {
	return segmentFileName(dir, offset, ProducerSnapshotFileSuffix)
}

// listProducerSnapshots returns the offsets of the snapshots in dir,
// ascending.
func listProducerSnapshots(fsys FS, dir string) ([]int64, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, storageError("list log dir", err)
	}
	var out []int64
	for _, e := range entries {
		if base, suffix, ok := parseSegmentFileName(e.Name()); ok && !e.IsDir() && suffix == ProducerSnapshotFileSuffix {
			out = append(out, base)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// writeProducerSnapshot writes entries as the snapshot at offset, durably
// (Kafka's ProducerStateManager.writeSnapshot writes the file and fsyncs
// it): the bytes go to "<name>.tmp", which is fsynced and closed, then
// renamed into place, and with syncDir the directory is fsynced. A snapshot
// under its final name is therefore always complete, and after a clean
// shutdown followed by a power loss the next start finds it. Without
// syncDir the caller makes the name durable later (the roll's background
// flush syncs the directory with the new segment). On error the temporary
// file is
// removed (Load removes any left over too); callers only log the error,
// since the log stays the durable record and the table can be rebuilt.
func writeProducerSnapshot(fsys FS, dir string, offset int64, entries []ProducerEntry, syncDir bool) error {
	path := producerSnapshotPath(dir, offset)
	tmp := path + TmpFileSuffix
	f, err := fsys.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return storageError("create producer snapshot", err)
	}
	err = writeAndSync(f, EncodeProducerSnapshot(entries))
	if cerr := f.Close(); err == nil && cerr != nil {
		err = storageError("close producer snapshot", cerr)
	}
	if err == nil {
		if rerr := fsys.Rename(tmp, path); rerr != nil {
			err = storageError("rename producer snapshot", rerr)
		}
	}
	if err != nil {
		_ = fsys.Remove(tmp) // best effort; Load removes leftovers
		return err
	}
	if !syncDir {
		return nil
	}
	// Durable: the snapshot's name (the rename), which Kafka 2.8 does not
	// ensure; without it a power loss could lose the whole file.
	if err := fsys.SyncDir(dir); err != nil {
		return storageError("sync log dir after producer snapshot", err)
	}
	return nil
}

// writeAndSync writes data at the start of f and fsyncs it.
func writeAndSync(f File, data []byte) error {
	if _, err := f.WriteAt(data, 0); err != nil {
		return storageError("write producer snapshot", err)
	}
	if err := f.Sync(); err != nil {
		return storageError("sync producer snapshot", err)
	}
	return nil
}

// readProducerSnapshot reads and decodes the snapshot at offset. A file
// that fails its checks returns an error wrapping
// ErrCorruptProducerSnapshot; an I/O failure one wrapping ErrStorage.
func readProducerSnapshot(fsys FS, dir string, offset int64) ([]ProducerEntry, error) {
	path := producerSnapshotPath(dir, offset)
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, storageError("open producer snapshot", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, storageError("stat producer snapshot", err)
	}
	if st.Size() > maxProducerSnapshotBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrCorruptProducerSnapshot, filepath.Base(path), st.Size())
	}
	data := make([]byte, st.Size())
	if n, err := f.ReadAt(data, 0); n < len(data) {
		return nil, storageError("read producer snapshot", err)
	}
	return DecodeProducerSnapshot(data)
}

// deleteProducerSnapshots removes the snapshots in dir whose offset
// satisfies drop.
func deleteProducerSnapshots(fsys FS, dir string, drop func(offset int64) bool) error {
	offsets, err := listProducerSnapshots(fsys, dir)
	if err != nil {
		return err
	}
	for _, o := range offsets {
		if !drop(o) {
			continue
		}
		if err := fsys.Remove(producerSnapshotPath(dir, o)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storageError("remove producer snapshot", err)
		}
	}
	return nil
}
