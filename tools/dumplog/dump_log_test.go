package dumplog

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"samsa/broker/group"
	"samsa/broker/record"
	"samsa/broker/storage"
	"samsa/kafka"
	"samsa/tools/internal/tooltest"
)

// writeDumpFixture writes partition "orders-0" with storage.Log: plain,
// keyed, header-carrying, idempotent, gzip-compressed and control batches,
// in two segments, every batch indexed. It returns the partition dir.
func writeDumpFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "orders-0")
	cfg := storage.DefaultConfig()
	cfg.SegmentBytes = 300
	cfg.IndexIntervalBytes = 1
	clock := time.UnixMilli(1700000000000)
	l, err := storage.OpenLog(storage.LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "orders", Partition: 0}, Config: cfg,
		Now: func() time.Time { return clock }, CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	const ts = 1700000000000
	appendBatch := func(h record.BuildHeader, codec record.Codec, recs ...record.Record) {
		t.Helper()
		for i := range recs {
			recs[i].OffsetDelta = int32(i)
			recs[i].TimestampDelta = int64(i * 10)
		}
		b, err := record.Build(h, recs, codec)
		if err != nil {
			t.Fatal(err)
		}
		if h.ProducerID >= 0 {
			// A producer's batch from mid-sequence: the leader path would
			// refuse the unknown producer (UNKNOWN_PRODUCER_ID), so copy it
			// in as a follower does, at the offset a leader would give it.
			b.SetBaseOffset(l.LogEndOffset())
			b.SetPartitionLeaderEpoch(3)
			_, err = l.AppendAsFollower(b)
		} else {
			_, err = l.AppendAsLeader(b, 3)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	plain := record.NewBuildHeader(0, ts)
	appendBatch(plain, record.CodecNone, record.Record{Value: []byte("hello")}, record.Record{Key: []byte("k1"), Value: []byte("world")})
	appendBatch(record.NewBuildHeader(0, ts+100), record.CodecNone,
		record.Record{Key: []byte("k2"), Value: nil, Headers: []record.Header{{Key: "trace", Value: []byte("1")}, {Key: "span", Value: nil}}})
	idem := record.NewBuildHeader(0, ts+200)
	idem.ProducerID, idem.ProducerEpoch, idem.BaseSequence = 4000, 2, 7
	appendBatch(idem, record.CodecNone, record.Record{Value: []byte("a")}, record.Record{Value: []byte("b")}, record.Record{Value: []byte("c")})
	appendBatch(record.NewBuildHeader(0, ts+300), record.CodecGzip,
		record.Record{Key: []byte("z"), Value: []byte(strings.Repeat("compressible ", 20))}, record.Record{Value: []byte("\xff\xfe")})
	txn := record.NewBuildHeader(0, ts+400)
	txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 5000, 0, 0, true
	appendBatch(txn, record.CodecNone, record.Record{Value: []byte("in-txn")})
	// Clients may not write markers: append it as a follower copying the
	// leader's marker would (same bytes as the leader's).
	mh := record.NewBuildHeader(l.LogEndOffset(), ts+500)
	mh.ProducerID, mh.ProducerEpoch, mh.PartitionLeaderEpoch = 5000, 0, 3
	marker, err := record.BuildEndTxnMarker(mh, record.EndTxnMarker{Commit: true, CoordinatorEpoch: 9})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsFollower(marker); err != nil {
		t.Fatal(err)
	}
	appendBatch(record.NewBuildHeader(0, ts+600), record.CodecNone, record.Record{Value: []byte("last")})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dumpTool runs kafka-dump-log and replaces the fixture dir with DIR.
func dumpTool(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	out, errOut, code := runTool(t, "", append([]string{"kafka-dump-log"}, args...)...)
	return strings.ReplaceAll(out, dir, "DIR"), strings.ReplaceAll(errOut, dir, "DIR"), code
}

func segmentFiles(t *testing.T, dir, ext string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil || len(files) < 2 {
		t.Fatalf("want at least two %s files in %s: %v %v", ext, dir, files, err)
	}
	return files
}

func TestToolDumpLogGolden(t *testing.T) {
	dir := writeDumpFixture(t)
	logs := strings.Join(segmentFiles(t, dir, ".log"), ",")
	cases := []struct {
		name string
		args []string
	}{
		{"dump_log_shallow", []string{"--files", logs}},
		{"dump_log_deep", []string{"--files", logs, "--deep-iteration"}},
		{"dump_log_print_data", []string{"--files", logs, "--print-data-log"}},
		{"dump_log_skip_metadata", []string{"--files", logs, "--print-data-log", "--skip-record-metadata"}},
		{"dump_log_index", []string{"--files", strings.Join(segmentFiles(t, dir, ".index"), ",")}},
		{"dump_log_timeindex", []string{"--files", strings.Join(segmentFiles(t, dir, ".timeindex"), ",")}},
		{"dump_log_sanity", []string{"--files", strings.Join(append(segmentFiles(t, dir, ".index"), segmentFiles(t, dir, ".timeindex")...), ","), "--index-sanity-check"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := dumpTool(t, dir, tc.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			tooltest.CheckGolden(t, tc.name, []byte(out))
		})
	}
}

func TestToolDumpLogVerifyIndexOnly(t *testing.T) {
	dir := writeDumpFixture(t)
	idx := segmentFiles(t, dir, ".index")[0]
	out, errOut, code := dumpTool(t, dir, "--files", idx, "--verify-index-only")
	if code != 0 || errOut != "" || strings.Contains(out, "position:") {
		t.Fatalf("clean index: exit %d out %q err %q", code, out, errOut)
	}
	// Point the second entry (offset 5) at the first batch (last offset 1).
	data, err := os.ReadFile(idx)
	if err != nil || len(data) < 16 {
		t.Fatalf("index %d bytes: %v", len(data), err)
	}
	binary.BigEndian.PutUint32(data[12:], 0)
	if err := os.WriteFile(idx, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = dumpTool(t, dir, "--files", idx, "--verify-index-only")
	want := "Mismatches in :DIR/00000000000000000000.index\n  Index offset: 5, log offset: 1\n"
	if code != 0 || errOut != want {
		t.Errorf("exit %d stderr %q, want %q", code, errOut, want)
	}
}

func TestToolDumpLogCorruptInputs(t *testing.T) {
	dir := writeDumpFixture(t)
	logFile := segmentFiles(t, dir, ".log")[0]
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	// A torn tail: Kafka stops and reports the invalid bytes.
	torn := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(torn, append(data, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := dumpTool(t, dir, "--files", torn)
	if code != 0 || !strings.HasSuffix(out, "Found 17 invalid bytes at the end of 00000000000000000000.log\n") {
		t.Errorf("torn tail: exit %d\n%s", code, out)
	}
	// A batch length below the minimum is an exception, as in Kafka.
	bad := append([]byte{}, data...)
	binary.BigEndian.PutUint32(bad[8:], 3)
	if err := os.WriteFile(torn, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := dumpTool(t, dir, "--files", torn)
	if code != 1 || !strings.Contains(errOut, "CorruptRecordException: Found record size 3 smaller than minimum record overhead (14)") {
		t.Errorf("bad size: exit %d stderr %q", code, errOut)
	}
	// A flipped CRC byte shows isvalid: false.
	crc := append([]byte{}, data...)
	crc[len(crc)-1] ^= 0xff
	if err := os.WriteFile(torn, crc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = dumpTool(t, dir, "--files", torn)
	if !strings.Contains(out, "isvalid: false") {
		t.Errorf("corrupt CRC not reported:\n%s", out)
	}
	// A corrupt time index fails the sanity check with Kafka's message.
	ti := filepath.Join(dir, "00000000000000000000.timeindex")
	tdata, _ := os.ReadFile(ti)
	if err := os.WriteFile(ti, append(tdata, 1, 2, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = dumpTool(t, dir, "--files", ti, "--index-sanity-check")
	if code != 1 || !regexp.MustCompile(`CorruptIndexException: Time index file DIR/00000000000000000000.timeindex is corrupt, found \d+ bytes which is neither positive nor a multiple of 12\.`).MatchString(errOut) {
		t.Errorf("sanity: exit %d stderr %q", code, errOut)
	}
	// Usage errors and unknown files.
	if _, errOut, code := dumpTool(t, dir); code != 1 || !strings.Contains(errOut, `Missing required argument "[files]"`) {
		t.Errorf("no --files: exit %d %q", code, errOut)
	}
	if out, errOut, code := dumpTool(t, dir, "--files", filepath.Join(dir, "leader-epoch-checkpoint.x")); code != 0 || errOut != "Ignoring unknown file DIR/leader-epoch-checkpoint.x\n" || out != "Dumping DIR/leader-epoch-checkpoint.x\n" {
		t.Errorf("unknown file: exit %d out %q err %q", code, out, errOut)
	}
	if _, errOut, code := dumpTool(t, dir, "--files", filepath.Join(dir, "00000000000000000999.log")); code != 1 || !strings.Contains(errOut, "NoSuchFileException") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
}

// FuzzToolDumpLog feeds arbitrary bytes to kafka-dump-log as a segment, an
// offset index and a time index (each alone and next to the others).
// Invariant: the tool never panics and never reads or allocates beyond the
// files; errors are reported and the exit code is 0 or 1.
func FuzzToolDumpLog(f *testing.F) {
	b, err := record.Build(record.NewBuildHeader(0, 1700000000000), []record.Record{{Key: []byte("k"), Value: []byte("v")}, {OffsetDelta: 1, Value: []byte("w")}}, record.CodecNone)
	if err != nil {
		f.Fatal(err)
	}
	gz, err := record.Build(record.NewBuildHeader(2, 1700000000000), []record.Record{{Value: []byte("gzip")}}, record.CodecGzip)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(b), []byte{0, 0, 0, 1, 0, 0, 0, 0}, []byte{0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 0, 0, 0, 1})
	f.Add(append([]byte(b), gz...), []byte{0, 0, 0, 2, 0, 0, 0, byte(len(b))}, []byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 2}, []byte{0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0}, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, logData, indexData, timeData []byte) {
		dir := t.TempDir()
		files := map[string][]byte{".log": logData, ".index": indexData, ".timeindex": timeData}
		var names []string
		for ext, data := range files {
			name := filepath.Join(dir, "00000000000000000000"+ext)
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		for _, args := range [][]string{
			{"--files", strings.Join(names, ","), "--print-data-log"},
			{"--files", strings.Join(names, ","), "--verify-index-only", "--max-message-size", "100"},
			{"--files", strings.Join(names, ","), "--index-sanity-check"},
			{"--files", strings.Join(names, ","), "--offsets-decoder"},
		} {
			if _, _, code := runTool(t, "", append([]string{"kafka-dump-log"}, args...)...); code != 0 && code != 1 {
				t.Fatalf("exit %d", code)
			}
		}
	})
}

func TestToolDumpLogOffsetsDecoder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-7")
	l, err := storage.OpenLog(storage.LogOptions{Dir: dir, TP: kafka.TopicPartition{Topic: "__consumer_offsets", Partition: 7},
		Config: storage.DefaultConfig(), CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	// ConsumerProtocol assignment v0: [orders-0, orders-2], user data 00 0A.
	assignment := []byte{0, 0, 0, 0, 0, 1, 0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0x0a}
	gv := group.GroupValue{ProtocolType: "consumer", Generation: 4, Protocol: "range", Leader: "m-1", CurrentStateTimestamp: 1700000000000,
		Members: []group.MemberValue{{MemberID: "m-1", ClientID: "c", ClientHost: "/127.0.0.1", RebalanceTimeoutMs: 300000, SessionTimeoutMs: 10000, Assignment: assignment}}}
	recs := []record.Record{
		{Key: group.EncodeOffsetKey("g", "orders", 0), Value: group.EncodeOffsetValue(group.OffsetValue{Offset: 42, LeaderEpoch: 3, CommitTimestamp: 1700000000000, ExpireTimestamp: -1})},
		{Key: group.EncodeOffsetKey("g", "orders", 2), Value: group.EncodeOffsetValue(group.OffsetValue{Offset: 7, LeaderEpoch: -1, Metadata: "note", CommitTimestamp: 1700000000000, ExpireTimestamp: -1})},
		{Key: group.EncodeGroupKey("g"), Value: group.EncodeGroupValue(gv)},
		{Key: group.EncodeOffsetKey("g", "orders", 1)},
		{Key: group.EncodeGroupKey("gone")},
	}
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	b, err := record.Build(record.NewBuildHeader(0, 1700000000000), recs, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := dumpTool(t, dir, "--files", filepath.Join(dir, "00000000000000000000.log"), "--offsets-decoder", "--skip-record-metadata")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	tooltest.CheckGolden(t, "dump_log_offsets_decoder", []byte(out))
}

// FuzzToolOffsetsDecoder: any key and value bytes give texts or an error,
// never a panic (the consumer assignment parser bounds every length).
func FuzzToolOffsetsDecoder(f *testing.F) {
	f.Add(group.EncodeOffsetKey("g", "t", 1), group.EncodeOffsetValue(group.OffsetValue{Offset: 1, LeaderEpoch: -1, ExpireTimestamp: -1}))
	f.Add(group.EncodeGroupKey("g"), group.EncodeGroupValue(group.GroupValue{ProtocolType: "consumer", Members: []group.MemberValue{{MemberID: "m", Assignment: []byte{0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 1, 9}}}}))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, _, _ = formatOffsetsRecord(&record.Record{Key: key, Value: value})
		_ = consumerAssignmentText(value)
	})
}
