package dumplog

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
)

// writeSnapshotFixture appends idempotent batches of two producers with
// storage.Log's leader path and closes the log, which writes the producer
// snapshot at the log end as the broker does on shutdown. It returns the
// snapshot's path.
func writeSnapshotFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "idem-0")
	clock := time.UnixMilli(1700000000000)
	l, err := storage.OpenLog(storage.LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "idem", Partition: 0},
		Config: storage.DefaultConfig(), Now: func() time.Time { return clock }, CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	appendIdem := func(pid int64, epoch int16, seq int32, ts int64, n int) {
		t.Helper()
		h := record.NewBuildHeader(0, ts)
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = pid, epoch, seq
		recs := make([]record.Record, n)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Value: []byte("v")}
		}
		b, err := record.Build(h, recs, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	appendIdem(1000, 0, 0, 1700000000000, 3) // offsets 0-2
	appendIdem(2000, 4, 0, 1700000000100, 1) // offset 3
	appendIdem(1000, 0, 3, 1700000000200, 2) // offsets 4-5, sequences 3-4
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, err := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	if err != nil || len(snaps) != 1 {
		t.Fatalf("want one snapshot in %s: %v %v", dir, snaps, err)
	}
	return snaps[0]
}

// TestToolDumpLogSnapshotFromBroker: a snapshot written by broker/storage
// prints as Kafka 2.8's DumpLogSegments.dumpProducerIdSnapshot prints it:
// "producerId: .. producerEpoch: .. coordinatorEpoch: .. currentTxnFirstOffset: None "
// then "firstSequence: .. lastSequence: .. lastOffset: .. offsetDelta: .. timestamp: ..".
func TestToolDumpLogSnapshotFromBroker(t *testing.T) {
	snap := writeSnapshotFixture(t)
	if filepath.Base(snap) != "00000000000000000006.snapshot" {
		t.Fatalf("snapshot %s, want the log end offset 6", filepath.Base(snap))
	}
	dir := filepath.Dir(snap)
	out, errOut, code := dumpTool(t, dir, "--files", snap)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "Dumping DIR/00000000000000000006.snapshot" {
		t.Fatalf("output:\n%s", out)
	}
	want := map[string]bool{
		"producerId: 1000 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: None firstSequence: 3 lastSequence: 4 lastOffset: 5 offsetDelta: 1 timestamp: 1700000000201": true,
		"producerId: 2000 producerEpoch: 4 coordinatorEpoch: -1 currentTxnFirstOffset: None firstSequence: 0 lastSequence: 0 lastOffset: 3 offsetDelta: 0 timestamp: 1700000000100": true,
	}
	for _, l := range lines[1:] {
		if !want[l] {
			t.Errorf("unexpected line %q", l)
		}
		delete(want, l)
	}
	for l := range want {
		t.Errorf("missing line %q", l)
	}
}

// kafkaSnapshot builds snapshot bytes from Kafka 2.8's
// ProducerStateManager.PidSnapshotMapSchema by hand (not with the
// broker's encoder), with the CRC-32C over everything after the crc field.
func kafkaSnapshot(version int16, entries [][8]int64, trailing []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e[0])) // producer_id
		b = binary.BigEndian.AppendUint16(b, uint16(e[1])) // epoch
		b = binary.BigEndian.AppendUint32(b, uint32(e[2])) // last_sequence
		b = binary.BigEndian.AppendUint64(b, uint64(e[3])) // last_offset
		b = binary.BigEndian.AppendUint32(b, uint32(e[4])) // offset_delta
		b = binary.BigEndian.AppendUint64(b, uint64(e[5])) // timestamp
		b = binary.BigEndian.AppendUint32(b, uint32(e[6])) // coordinator_epoch
		b = binary.BigEndian.AppendUint64(b, uint64(e[7])) // current_txn_first_offset
	}
	b = append(b, trailing...)
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestToolDumpLogSnapshotKafkaLayout: golden bytes in Kafka's layout, with
// an open transaction (Some(offset)), an entry without batches (no batch
// fields, a trailing space as Kafka prints it) and a sequence that wrapped
// past Int.MaxValue (DefaultRecordBatch.decrementSequence). Bytes after
// the entries are ignored by the schema but covered by the CRC.
func TestToolDumpLogSnapshotKafkaLayout(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "00000000000000000042.snapshot")
	data := kafkaSnapshot(1, [][8]int64{
		{7, 1, 9, 41, 2, 1700000000005, 3, 39},
		{8, 0, -1, -1, 0, 1700000000000, -1, -1},
		{9, 2, 1, 30, 3, 1700000000009, -1, -1},
	}, []byte{0xde, 0xad})
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := dumpTool(t, dir, "--files", file)
	want := "Dumping DIR/00000000000000000042.snapshot\n" +
		"producerId: 7 producerEpoch: 1 coordinatorEpoch: 3 currentTxnFirstOffset: Some(39) firstSequence: 7 lastSequence: 9 lastOffset: 41 offsetDelta: 2 timestamp: 1700000000005\n" +
		"producerId: 8 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: None \n" +
		"producerId: 9 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: None firstSequence: 2147483646 lastSequence: 1 lastOffset: 30 offsetDelta: 3 timestamp: 1700000000009\n"
	if code != 0 || errOut != "" || out != want {
		t.Fatalf("exit %d stderr %q\ngot:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	// The broker's own decoder agrees with this layout.
	if _, err := storage.DecodeProducerSnapshot(data[:len(data)-2]); err == nil {
		t.Error("storage accepted bytes whose CRC covers the trailing bytes")
	}
	if es, err := storage.DecodeProducerSnapshot(kafkaSnapshot(1, [][8]int64{{7, 1, 9, 41, 2, 1700000000005, 3, 39}}, nil)); err != nil ||
		len(es) != 1 || es[0].ProducerID != 7 || es[0].CurrentTxnFirstOffset != 39 || es[0].Batches[0].FirstSeq != 7 {
		t.Errorf("storage decodes %+v, %v", es, err)
	}
}

// TestToolDumpLogSnapshotCorrupt: Kafka's readSnapshot checks the schema,
// then the version, then the CRC, and DumpLogSegments prints the
// CorruptSnapshotException's message on stderr and carries on (exit 0).
func TestToolDumpLogSnapshotCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := kafkaSnapshot(1, [][8]int64{{7, 1, 9, 41, 2, 1700000000005, 3, -1}}, nil)
	flipped := append([]byte(nil), good...)
	flipped[20] ^= 0x01
	storedCRC := binary.BigEndian.Uint32(good[2:])
	v2 := kafkaSnapshot(2, nil, nil)
	negative := append([]byte(nil), good[:6]...)
	negative = binary.BigEndian.AppendUint32(negative, 0xffffffff)
	tooMany := append([]byte(nil), good[:6]...)
	tooMany = binary.BigEndian.AppendUint32(tooMany, 1000)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "Snapshot failed schema validation: Error reading field 'version': java.nio.BufferUnderflowException"},
		{"short crc", []byte{0, 1, 0}, "Snapshot failed schema validation: Error reading field 'crc': java.nio.BufferUnderflowException"},
		{"no count", good[:8], "Snapshot failed schema validation: Error reading field 'producer_entries': java.nio.BufferUnderflowException"},
		{"torn entry", good[:len(good)-15], "Snapshot failed schema validation: Error reading field 'producer_entries': Error reading field 'timestamp': java.nio.BufferUnderflowException"},
		{"negative count", negative, "Snapshot failed schema validation: Error reading field 'producer_entries': Array size -1 cannot be negative"},
		{"count beyond bytes", tooMany, "Snapshot failed schema validation: Error reading field 'producer_entries': Error reading array of size 1000, only 0 bytes available"},
		{"version 2", v2, "Snapshot contained an unknown file version 2"},
		{"flipped byte", flipped, "Snapshot is corrupt (CRC is no longer valid). Stored crc: " +
			strconv.FormatUint(uint64(storedCRC), 10) + ". Computed crc: " + strconv.FormatUint(uint64(crc32.Checksum(flipped[6:], crc32.MakeTable(crc32.Castagnoli))), 10)},
	}
	okFile := filepath.Join(dir, "00000000000000000001.snapshot")
	if err := os.WriteFile(okFile, good, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, "00000000000000000000.snapshot")
			if err := os.WriteFile(file, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := dumpTool(t, dir, "--files", file+","+okFile)
			wantOut := "Dumping DIR/00000000000000000000.snapshot\nDumping DIR/00000000000000000001.snapshot\n" +
				"producerId: 7 producerEpoch: 1 coordinatorEpoch: 3 currentTxnFirstOffset: None firstSequence: 7 lastSequence: 9 lastOffset: 41 offsetDelta: 2 timestamp: 1700000000005\n"
			if code != 0 || errOut != tc.want+"\n" || out != wantOut {
				t.Errorf("exit %d\nstderr %q\nwant   %q\nstdout %q", code, errOut, tc.want+"\n", out)
			}
		})
	}
	if _, errOut, code := dumpTool(t, dir, "--files", filepath.Join(dir, "00000000000000000009.snapshot")); code != 1 ||
		!strings.Contains(errOut, "java.nio.file.NoSuchFileException: DIR/00000000000000000009.snapshot") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
}

// FuzzToolDumpLogSnapshot: any bytes as a .snapshot file give producer
// lines or one Kafka-worded message on stderr, exit 0; never a panic, and
// never more entries than 46-byte slots in the file.
func FuzzToolDumpLogSnapshot(f *testing.F) {
	f.Add(kafkaSnapshot(1, [][8]int64{{7, 1, 9, 41, 2, 1700000000005, 3, 39}}, nil))
	f.Add(kafkaSnapshot(1, nil, nil))
	f.Add(kafkaSnapshot(1, [][8]int64{{8, 0, -1, -1, 0, 0, -1, -1}}, []byte{1}))
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeProducerSnapshot(data)
		if err == nil && len(entries)*46 > len(data) {
			t.Fatalf("%d entries from %d bytes", len(entries), len(data))
		}
		file := filepath.Join(t.TempDir(), "00000000000000000000.snapshot")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runTool(t, "", "kafka-dump-log", "--files", file)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if (err != nil) != (errOut != "") || strings.Count(out, "\n") != 1+len(entries) {
			t.Fatalf("decode error %v, stderr %q, %d lines for %d entries", err, errOut, strings.Count(out, "\n"), len(entries))
		}
	})
}
