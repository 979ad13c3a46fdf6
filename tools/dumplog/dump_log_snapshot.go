package dumplog

// kafka-dump-log for producer-state snapshots ("<offset>.snapshot"), as
// Kafka 2.8's DumpLogSegments.dumpProducerIdSnapshot prints them from
// ProducerStateManager.readSnapshot.
//
// The file is Kafka's PidSnapshotMapSchema (version 1), big-endian:
//
//	version  int16   must be 1
//	crc      uint32  CRC-32C of every byte after this field (trailing bytes too)
//	count    int32   number of entries
//	entries  count × 46 bytes: producer_id int64, epoch int16,
//	         last_sequence int32, last_offset int64, offset_delta int32,
//	         timestamp int64, coordinator_epoch int32,
//	         current_txn_first_offset int64 (-1: no open transaction)
//
// broker/storage writes this layout (producer_snapshot.go), but the tools
// may import only broker/record of the broker's internals for dump-log
// (tools/lint TestLintToolsImports), and Kafka's reader differs from the
// broker's anyway: it checks the schema first, then the version, then the
// CRC, ignores bytes after the entries and words each failure its own way.
// So this file keeps its own small reader, written from Kafka's schema.

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"

	"samsa/tools/internal/tool"
)

// Kafka's ProducerStateManager snapshot constants.
const (
	snapshotVersion   = 1
	snapshotCRCOffset = 2
	snapshotDataStart = snapshotCRCOffset + 4 // ProducerEntriesOffset
	// dumpMaxSnapshotFile bounds a snapshot read into memory.
	dumpMaxSnapshotFile = 1 << 30
)

// snapshotEntryFields are the entry schema's fields in order, with sizes,
// for Kafka's "Error reading field" messages.
var snapshotEntryFields = [...]struct {
	name string
	size int
}{
	{"producer_id", 8}, {"epoch", 2}, {"last_sequence", 4}, {"last_offset", 8},
	{"offset_delta", 4}, {"timestamp", 8}, {"coordinator_epoch", 4}, {"current_txn_first_offset", 8},
}

// snapshotEntry is one producer of a snapshot, as stored.
type snapshotEntry struct {
	producerID            int64
	epoch                 int16
	lastSeq               int32
	lastOffset            int64
	offsetDelta           int32
	timestamp             int64
	coordinatorEpoch      int32
	currentTxnFirstOffset int64
}

// corruptSnapshot is Kafka's CorruptSnapshotException: its message goes to
// stderr and the tool carries on with the next file.
type corruptSnapshot struct{ msg string }

func (e corruptSnapshot) Error() string { return e.msg }

var dumpCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodeProducerSnapshot reads a snapshot as Kafka 2.8's readSnapshot:
// the schema (a too-short field or an array count beyond the bytes left
// is "Snapshot failed schema validation: ..."), then the version, then the
// CRC. It allocates at most one entry per 46 input bytes.
func decodeProducerSnapshot(data []byte) ([]snapshotEntry, error) {
	schemaErr := func(field, cause string) error {
		return corruptSnapshot{fmt.Sprintf("Snapshot failed schema validation: Error reading field '%s': %s", field, cause)}
	}
	const underflow = "java.nio.BufferUnderflowException"
	if len(data) < 2 {
		return nil, schemaErr("version", underflow)
	}
	if len(data) < snapshotDataStart {
		return nil, schemaErr("crc", underflow)
	}
	if len(data) < snapshotDataStart+4 {
		return nil, schemaErr("producer_entries", underflow)
	}
	count := int32(binary.BigEndian.Uint32(data[snapshotDataStart:]))
	p := data[snapshotDataStart+4:]
	if count < 0 {
		return nil, schemaErr("producer_entries", fmt.Sprintf("Array size %d cannot be negative", count))
	}
	if int64(count) > int64(len(p)) {
		return nil, schemaErr("producer_entries", fmt.Sprintf("Error reading array of size %d, only %d bytes available", count, len(p)))
	}
	var entries []snapshotEntry
	for i := int32(0); i < count; i++ {
		var vals [len(snapshotEntryFields)]uint64
		for f, fd := range snapshotEntryFields {
			if len(p) < fd.size {
				return nil, schemaErr("producer_entries", fmt.Sprintf("Error reading field '%s': %s", fd.name, underflow))
			}
			switch fd.size {
			case 8:
				vals[f] = binary.BigEndian.Uint64(p)
			case 4:
				vals[f] = uint64(binary.BigEndian.Uint32(p))
			case 2:
				vals[f] = uint64(binary.BigEndian.Uint16(p))
			}
			p = p[fd.size:]
		}
		entries = append(entries, snapshotEntry{
			producerID:            int64(vals[0]),
			epoch:                 int16(vals[1]),
			lastSeq:               int32(vals[2]),
			lastOffset:            int64(vals[3]),
			offsetDelta:           int32(vals[4]),
			timestamp:             int64(vals[5]),
			coordinatorEpoch:      int32(vals[6]),
			currentTxnFirstOffset: int64(vals[7]),
		})
	}
	if v := int16(binary.BigEndian.Uint16(data)); v != snapshotVersion {
		return nil, corruptSnapshot{fmt.Sprintf("Snapshot contained an unknown file version %d", v)}
	}
	stored := binary.BigEndian.Uint32(data[snapshotCRCOffset:])
	if computed := crc32.Checksum(data[snapshotDataStart:], dumpCastagnoli); computed != stored {
		return nil, corruptSnapshot{fmt.Sprintf("Snapshot is corrupt (CRC is no longer valid). Stored crc: %d. Computed crc: %d", stored, computed)}
	}
	return entries, nil
}

// snapshotFirstSeq is Kafka's DefaultRecordBatch.decrementSequence(lastSeq,
// offsetDelta) in Java int arithmetic (wrapping).
func snapshotFirstSeq(lastSeq, delta int32) int32 {
	if lastSeq < delta {
		return int32(math.MaxInt32) - (delta - lastSeq) + 1
	}
	return lastSeq - delta
}

// dumpProducerSnapshot prints each producer of a snapshot on one line, in
// file order; a corrupt snapshot is reported on stderr (Kafka prints the
// CorruptSnapshotException's message and goes on), a missing file ends the
// tool as Kafka's uncaught NoSuchFileException does.
func (st *dumpState) dumpProducerSnapshot(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return tool.NoSuchFile(file, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return tool.NoSuchFile(file, err)
	}
	if fi.Size() > dumpMaxSnapshotFile {
		return tool.JavaException{Class: "java.lang.OutOfMemoryError", Msg: fmt.Sprintf("Required array size too large (%s is %d bytes)", file, fi.Size())}
	}
	data := make([]byte, fi.Size())
	if n, err := f.ReadAt(data, 0); n < len(data) {
		return tool.JavaException{Class: "java.io.IOException", Msg: err.Error()}
	}
	entries, err := decodeProducerSnapshot(data)
	if err != nil {
		st.out.Flush()
		fmt.Fprintln(st.stderr, err)
		return nil
	}
	for _, e := range entries {
		txn := "None"
		if e.currentTxnFirstOffset >= 0 {
			txn = fmt.Sprintf("Some(%d)", e.currentTxnFirstOffset)
		}
		fmt.Fprintf(st.out, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s ",
			e.producerID, e.epoch, e.coordinatorEpoch, txn)
		if e.lastOffset >= 0 {
			fmt.Fprintf(st.out, "firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
				snapshotFirstSeq(e.lastSeq, e.offsetDelta), e.lastSeq, e.lastOffset, e.offsetDelta, e.timestamp)
		}
		fmt.Fprintln(st.out)
	}
	return nil
}
