package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"samsa/kafka"
)

func readGoldenCheckpoint(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "checkpoint", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStorageCheckpointGolden checks the encoder against Kafka's offset
// checkpoint layout (reference §7.1) byte for byte, and that the golden file
// parses back to the same offsets.
func TestStorageCheckpointGolden(t *testing.T) {
	offsets := map[kafka.TopicPartition]int64{
		{Topic: "foo", Partition: 0}: 1234,
		{Topic: "foo", Partition: 1}: 987,
		{Topic: "bar", Partition: 0}: 0,
	}
	for _, tc := range []struct {
		golden  string
		offsets map[kafka.TopicPartition]int64
	}{
		{"offset-checkpoint.golden", offsets},
		{"offset-checkpoint-empty.golden", map[kafka.TopicPartition]int64{}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			want := readGoldenCheckpoint(t, tc.golden)
			got, err := EncodeOffsetCheckpoint(tc.offsets)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encoded:\n%q\nwant:\n%q", got, want)
			}
			back, err := ReadOffsetCheckpoint(bytes.NewReader(want), tc.golden)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.offsets) {
				t.Fatalf("parsed %v, want %v", back, tc.offsets)
			}
		})
	}
}

// TestStorageCheckpointLenient covers inputs Kafka's reader accepts.
func TestStorageCheckpointLenient(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want map[kafka.TopicPartition]int64
	}{
		{"empty file", "", map[kafka.TopicPartition]int64{}},
		{"version only", "0\n", map[kafka.TopicPartition]int64{}},
		{"no final newline", "0\n1\nfoo 2 7", map[kafka.TopicPartition]int64{{Topic: "foo", Partition: 2}: 7}},
		{"tabs and runs of spaces", "0\n1\nfoo\t2   7", map[kafka.TopicPartition]int64{{Topic: "foo", Partition: 2}: 7}},
		{"trailing space", "0\n1\nfoo 2 7 \n", map[kafka.TopicPartition]int64{{Topic: "foo", Partition: 2}: 7}},
		{"crlf", "0\r\n1\r\nfoo 2 7\r\n", map[kafka.TopicPartition]int64{{Topic: "foo", Partition: 2}: 7}},
		{"negative offset", "0\n1\nfoo 2 -1\n", map[kafka.TopicPartition]int64{{Topic: "foo", Partition: 2}: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadOffsetCheckpoint(strings.NewReader(tc.in), "f")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStorageCheckpointMalformed checks that every malformed input is an
// error that names the file and, where there is one, the line.
func TestStorageCheckpointMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		line int
	}{
		{"bad version", "1\n0\n", 1},
		{"version not a number", "x\n0\n", 1},
		{"version with space", " 0\n0\n", 1},
		{"bad count", "0\nz\n", 2},
		{"negative count", "0\n-1\n", 2},
		{"count too high", "0\n2\nfoo 0 1\n", 0},
		{"count too low", "0\n0\nfoo 0 1\n", 0},
		{"two fields", "0\n1\nfoo 0\n", 3},
		{"four fields", "0\n1\nfoo 0 1 2\n", 3},
		{"leading space", "0\n1\n foo 0 1\n", 3},
		{"empty line", "0\n2\nfoo 0 1\n\nfoo 1 1\n", 4},
		{"bad partition", "0\n1\nfoo x 1\n", 3},
		{"negative partition", "0\n1\nfoo -1 1\n", 3},
		{"partition overflow", "0\n1\nfoo 2147483648 1\n", 3},
		{"bad offset", "0\n1\nfoo 0 1.5\n", 3},
		{"offset overflow", "0\n1\nfoo 0 9223372036854775808\n", 3},
		{"duplicate", "0\n2\nfoo 0 1\nfoo 0 2\n", 4},
		{"line too long", "0\n1\n" + strings.Repeat("a", maxCheckpointLine+1) + " 0 1\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadOffsetCheckpoint(strings.NewReader(tc.in), "/d/recovery-point-offset-checkpoint")
			if !errors.Is(err, ErrMalformedCheckpoint) {
				t.Fatalf("err = %v, want ErrMalformedCheckpoint", err)
			}
			var ce *CheckpointError
			if !errors.As(err, &ce) || ce.Line != tc.line {
				t.Fatalf("err = %#v, want line %d", err, tc.line)
			}
			if !strings.Contains(err.Error(), "/d/recovery-point-offset-checkpoint") {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
}

// TestStorageCheckpointEncodeRejects checks that entries which could not be
// read back are refused rather than written.
func TestStorageCheckpointEncodeRejects(t *testing.T) {
	for _, tp := range []kafka.TopicPartition{
		{Topic: "", Partition: 0},
		{Topic: "a b", Partition: 0},
		{Topic: "a\nb", Partition: 0},
		{Topic: "a", Partition: -1},
	} {
		if _, err := EncodeOffsetCheckpoint(map[kafka.TopicPartition]int64{tp: 1}); err == nil {
			t.Errorf("EncodeOffsetCheckpoint(%q/%d) succeeded", tp.Topic, tp.Partition)
		}
	}
}

// TestStorageCheckpointFileRoundTrip writes and reads an offset checkpoint on
// a real directory: missing file reads empty, writes replace atomically, no
// .tmp file remains, and a stale .tmp from a crash is ignored.
func TestStorageCheckpointFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ReplicationCheckpointFile)
	cf := NewOffsetCheckpointFile(OSFS{}, path)

	got, err := cf.Read()
	if err != nil || len(got) != 0 {
		t.Fatalf("missing file: got %v, %v; want empty", got, err)
	}

	// A crash after writing the .tmp file but before the rename.
	if err := os.WriteFile(path+".tmp", []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = cf.Read()
	if err != nil || len(got) != 0 {
		t.Fatalf("with stale tmp: got %v, %v; want empty", got, err)
	}

	first := map[kafka.TopicPartition]int64{{Topic: "foo", Partition: 0}: 1234, {Topic: "foo", Partition: 1}: 987, {Topic: "bar", Partition: 0}: 0}
	if err := cf.Write(first); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := readGoldenCheckpoint(t, "offset-checkpoint.golden"); !bytes.Equal(raw, want) {
		t.Fatalf("file content %q, want %q", raw, want)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("tmp file left behind: %v", err)
	}

	second := map[kafka.TopicPartition]int64{{Topic: "baz", Partition: 7}: 42}
	if err := cf.Write(second); err != nil {
		t.Fatal(err)
	}
	got, err = cf.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, second) {
		t.Fatalf("read %v, want %v", got, second)
	}

	if err := os.WriteFile(path, []byte("0\n5\nfoo 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cf.Read(); !errors.Is(err, ErrMalformedCheckpoint) || !strings.Contains(err.Error(), path) {
		t.Fatalf("corrupt file: err = %v", err)
	}
}

// TestStorageCheckpointFileWriteError checks that a failed write surfaces as
// ErrStorage and leaves the previous content in place.
func TestStorageCheckpointFileWriteError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RecoveryPointCheckpointFile)
	cf := NewOffsetCheckpointFile(OSFS{}, path)
	old := map[kafka.TopicPartition]int64{{Topic: "a", Partition: 0}: 5}
	if err := cf.Write(old); err != nil {
		t.Fatal(err)
	}
	// A directory where the .tmp file should go makes the create fail.
	if err := os.Mkdir(path+".tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	err := cf.Write(map[kafka.TopicPartition]int64{{Topic: "a", Partition: 0}: 6})
	if !errors.Is(err, ErrStorage) {
		t.Fatalf("err = %v, want ErrStorage", err)
	}
	got, err := cf.Read()
	if err != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("after failed write: %v, %v; want %v", got, err, old)
	}
}

// TestStorageCheckpointFileSyncError checks that a failed fsync of the
// .tmp file (error-injecting FS) is ErrStorage and the old content stays.
func TestStorageCheckpointFileSyncError(t *testing.T) {
	efs := newErrorFS(OSFS{})
	path := filepath.Join(t.TempDir(), LogStartOffsetCheckpointFile)
	cf := NewOffsetCheckpointFile(efs, path)
	old := map[kafka.TopicPartition]int64{{Topic: "a", Partition: 0}: 5}
	if err := cf.Write(old); err != nil {
		t.Fatal(err)
	}
	for _, op := range []faultOp{opWrite, opSync, opRename} {
		efs.failAfter(op, 0)
		if err := cf.Write(map[kafka.TopicPartition]int64{{Topic: "a", Partition: 0}: 6}); !errors.Is(err, ErrStorage) {
			t.Fatalf("op %d: err = %v, want ErrStorage", op, err)
		}
		efs.heal()
		got, err := cf.Read()
		if err != nil || !reflect.DeepEqual(got, old) {
			t.Fatalf("op %d: after failed write: %v, %v; want %v", op, got, err, old)
		}
	}
}
