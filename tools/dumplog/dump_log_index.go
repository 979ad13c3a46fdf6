package dumplog

// kafka-dump-log for .index and .timeindex files (DumpLogSegments.dumpIndex
// and dumpTimeIndex of Kafka 2.8): each entry is printed and checked against
// the segment's .log file next to it.

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"samsa/broker/record"
	"samsa/tools/internal/tool"
)

const (
	offsetIndexEntry = 8
	timeIndexEntry   = 12
)

// readIndexFile reads a whole index file, refusing absurd sizes.
func readIndexFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, tool.NoSuchFile(file, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, tool.NoSuchFile(file, err)
	}
	if fi.Size() > dumpMaxIndexFile {
		return nil, tool.JavaException{Class: "java.io.IOException", Msg: fmt.Sprintf("index file %s is %d bytes, more than the %d Samsa reads", file, fi.Size(), dumpMaxIndexFile)}
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, tool.JavaException{Class: "java.io.IOException", Msg: err.Error()}
	}
	return data, nil
}

// siblingFile returns the file of the same segment with another suffix.
func siblingFile(file, suffix string) string {
	stem, _, _ := strings.Cut(filepath.Base(file), ".")
	return filepath.Join(filepath.Dir(file), stem+suffix)
}

// offsetEntry returns entry i of an offset index as (absolute offset,
// position).
func offsetEntry(data []byte, base int64, i int) (int64, int32) {
	e := data[i*offsetIndexEntry:]
	return base + int64(int32(binary.BigEndian.Uint32(e))), int32(binary.BigEndian.Uint32(e[4:]))
}

// timeEntry returns entry i of a time index as (timestamp, absolute offset).
func timeEntry(data []byte, base int64, i int) (int64, int64) {
	e := data[i*timeIndexEntry:]
	return int64(binary.BigEndian.Uint64(e)), base + int64(int32(binary.BigEndian.Uint32(e[8:])))
}

func (st *dumpState) dumpIndex(file string, o *dumpOpts) error {
	base, err := segmentBaseOffset(file)
	if err != nil {
		return err
	}
	seg, err := openSegment(siblingFile(file, ".log"))
	if err != nil {
		return err
	}
	defer seg.f.Close()
	data, err := readIndexFile(file)
	if err != nil {
		return err
	}
	entries := len(data) / offsetIndexEntry
	if entries == 0 {
		fmt.Fprintf(st.out, "%s is empty.\n", file)
		return nil
	}
	if o.sanityOnly {
		last, _ := offsetEntry(data, base, entries-1)
		if last < base {
			return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptIndexException", Msg: fmt.Sprintf(
				"Corrupt index found, index file (%s) has non-zero size but the last offset is %d which is less than the base offset %d.", absPath(file), last, base)}
		}
		if len(data)%offsetIndexEntry != 0 {
			return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptIndexException", Msg: fmt.Sprintf(
				"Index file %s is corrupt, found %d bytes which is neither positive nor a multiple of %d.", absPath(file), len(data), offsetIndexEntry)}
		}
		fmt.Fprintf(st.out, "%s passed sanity check.\n", file)
		return nil
	}
	for i := 0; i < entries; i++ {
		off, pos := offsetEntry(data, base, i)
		// A preallocated index ends in zero entries: stop at the first.
		if off == base && i > 0 {
			return nil
		}
		seg.slice(int64(pos), int64(o.maxMessageSize))
		b, _, err := seg.next()
		if err != nil {
			return err
		}
		if b == nil {
			return tool.JavaException{Class: "java.util.NoSuchElementException", Msg: fmt.Sprintf("no batch at position %d of %s within --max-message-size %d", pos, seg.name, o.maxMessageSize)}
		}
		if b.LastOffset() != off {
			st.indexMismatches.add(absPath(file), off, b.LastOffset(), true)
		}
		if !o.verifyOnly {
			fmt.Fprintf(st.out, "offset: %d position: %d\n", off, pos)
		}
	}
	return nil
}

// indexLookup is Kafka's OffsetIndex.lookup over the valid prefix of an
// offset index: the position of the largest entry at or below target, or 0.
func indexLookup(data []byte, base, target int64) int64 {
	var pos int64
	prev := int64(-1)
	for i := 0; i < len(data)/offsetIndexEntry; i++ {
		off, p := offsetEntry(data, base, i)
		if off <= prev || off > target {
			break
		}
		prev, pos = off, int64(p)
	}
	return pos
}

func (st *dumpState) dumpTimeIndex(file string, o *dumpOpts) error {
	base, err := segmentBaseOffset(file)
	if err != nil {
		return err
	}
	seg, err := openSegment(siblingFile(file, ".log"))
	if err != nil {
		return err
	}
	defer seg.f.Close()
	// A missing offset index reads as empty (Kafka would create it).
	offsets, _ := readIndexFile(siblingFile(file, ".index"))
	data, err := readIndexFile(file)
	if err != nil {
		return err
	}
	entries := len(data) / timeIndexEntry
	if o.sanityOnly {
		if err := timeIndexSanity(file, data, base); err != nil {
			return err
		}
		fmt.Fprintf(st.out, "%s passed sanity check.\n", file)
		return nil
	}
	abs := absPath(file)
	prev := record.NoTimestamp
	var rec record.Record
	for i := 0; i < entries; i++ {
		ts, off := timeEntry(data, base, i)
		if off == base && i > 0 {
			return nil
		}
		seg.slice(indexLookup(offsets, base, off), -1)
		var found record.Batch
		for {
			b, _, err := seg.next()
			if err != nil {
				return err
			}
			if b == nil || b.LastOffset() >= off {
				found = b
				break
			}
		}
		switch {
		case found == nil:
			st.timeErrors.shallow.add(abs, off, -1, false)
		case found.LastOffset() != off:
			st.timeErrors.shallow.add(abs, off, found.LastOffset(), false)
		default:
			maxTS := record.NoTimestamp
			it, err := found.Iter(0)
			if err != nil {
				return tool.JavaException{Class: "org.apache.kafka.common.KafkaException", Msg: err.Error()}
			}
			for it.Next(&rec) {
				maxTS = max(maxTS, recordTimestamp(found, &rec))
			}
			if err := it.Err(); err != nil {
				return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptRecordException", Msg: err.Error()}
			}
			if maxTS != ts {
				st.timeErrors.mismatch.add(abs, ts, maxTS, false)
			}
			if prev >= ts {
				st.timeErrors.outOfOrder.add(abs, ts, prev, false)
			}
		}
		if !o.verifyOnly {
			fmt.Fprintf(st.out, "timestamp: %d offset: %d\n", ts, off)
		}
		prev = ts
	}
	return nil
}

// timeIndexSanity is Kafka's TimeIndex.sanityCheck.
func timeIndexSanity(file string, data []byte, base int64) error {
	entries := len(data) / timeIndexEntry
	if entries == 0 {
		if len(data)%timeIndexEntry != 0 {
			return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptIndexException", Msg: fmt.Sprintf(
				"Time index file %s is corrupt, found %d bytes which is neither positive nor a multiple of %d.", absPath(file), len(data), timeIndexEntry)}
		}
		return nil
	}
	firstTS, _ := timeEntry(data, base, 0)
	lastTS, lastOff := timeEntry(data, base, entries-1)
	switch {
	case lastTS < firstTS:
		return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptIndexException", Msg: fmt.Sprintf(
			"Corrupt time index found, time index file (%s) has non-zero size but the last timestamp is %d which is less than the first timestamp %d", absPath(file), lastTS, firstTS)}
	case lastOff < base:
		return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptIndexException", Msg: fmt.Sprintf(
			"Corrupt time index found, time index file (%s) has non-zero size but the last offset is %d which is less than the first offset %d", absPath(file), lastOff, base)}
	case len(data)%timeIndexEntry != 0:
		return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptIndexException", Msg: fmt.Sprintf(
			"Time index file %s is corrupt, found %d bytes which is neither positive nor a multiple of %d.", absPath(file), len(data), timeIndexEntry)}
	}
	return nil
}

// timeIndexErrors is Kafka's TimeIndexDumpErrors.
type timeIndexErrors struct {
	mismatch, outOfOrder, shallow dumpPairs
}

func (e *timeIndexErrors) print(w io.Writer) {
	for _, f := range e.mismatch.files {
		fmt.Fprintf(w, "Found timestamp mismatch in :%s\n", f)
		for _, p := range e.mismatch.pairs[f] {
			fmt.Fprintf(w, "  Index timestamp: %d, log timestamp: %d\n", p[0], p[1])
		}
	}
	for _, f := range e.outOfOrder.files {
		fmt.Fprintf(w, "Found out of order timestamp in :%s\n", f)
		for _, p := range e.outOfOrder.pairs[f] {
			fmt.Fprintf(w, "  Index timestamp: %d, Previously indexed timestamp: %d\n", p[0], p[1])
		}
	}
	for _, f := range e.shallow.files {
		fmt.Fprintln(w, "The following indexed offsets are not found in the log.")
		for _, p := range e.shallow.pairs[f] {
			fmt.Fprintf(w, "Indexed offset: %d, found log offset: %d\n", p[0], p[1])
		}
	}
}
