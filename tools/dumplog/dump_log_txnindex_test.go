package dumplog

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Kafka 2.8 DumpLogSegments.dumpTxnIndex: one line per aborted transaction.
func TestToolDumpLogTxnIndex(t *testing.T) {
	dir := t.TempDir()
	var data []byte
	for _, e := range [][4]int64{{7, 2, 8, 5}, {9, 10, 12, 13}} {
		data = binary.BigEndian.AppendUint16(data, 0)
		for _, v := range e {
			data = binary.BigEndian.AppendUint64(data, uint64(v))
		}
	}
	file := filepath.Join(dir, "00000000000000000000.txnindex")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := dumpTool(t, dir, "--files", file)
	want := "Dumping DIR/00000000000000000000.txnindex\n" +
		"version: 0 producerId: 7 firstOffset: 2 lastOffset: 8 lastStableOffset: 5\n" +
		"version: 0 producerId: 9 firstOffset: 10 lastOffset: 12 lastStableOffset: 13\n"
	if code != 0 || errOut != "" || out != want {
		t.Fatalf("exit %d stderr %q\n got %q\nwant %q", code, errOut, out, want)
	}
	if err := os.WriteFile(file, data[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = dumpTool(t, dir, "--files", file)
	if code == 0 || !strings.Contains(errOut, "CorruptRecordException") || !strings.Contains(out, "producerId: 7") {
		t.Fatalf("torn index: exit %d out %q stderr %q", code, out, errOut)
	}
}
