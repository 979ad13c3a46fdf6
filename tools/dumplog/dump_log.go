package dumplog

// kafka-dump-log: print the contents of segment (.log), offset index (.index),
// time index (.timeindex) and producer snapshot (.snapshot) files (Kafka 2.8
// kafka.tools.DumpLogSegments).
//
// Behaviour:
//   - every line on stdout is worded as Kafka 2.8 prints it: "Dumping <file>",
//     "Starting offset: N", one line per batch, with --deep-iteration (implied
//     by --print-data-log) one "| offset: ..." line per record in 2.8's long
//     form (batch fields repeated on each record line, KAFKA-6181), index
//     lines "offset: N position: P", time index lines "timestamp: T offset: N";
//   - problems found on the way (index entries that do not match the log,
//     time index timestamps that do not match, non-consecutive offsets) are
//     listed on stderr at the end, as Kafka does;
//   - where Kafka's tool dies with a Java exception (corrupt index under
//     --index-sanity-check, a batch length below the minimum) Samsa prints
//     "Exception in thread "main" <class>: <message>" on stderr and exits 1;
//   - keys and values print as UTF-8 text (Kafka's StringDecoder), or with
//     --offsets-decoder as Kafka's GroupMetadataManager.formatRecordKeyAndValue
//     (dump_log_offsets.go); other decoder classes and
//     --transaction-log-decoder are refused;
//   - .snapshot files print one line per producer as Kafka 2.8's
//     dumpProducerIdSnapshot (dump_log_snapshot.go); a corrupt one (schema,
//     version, CRC-32C) prints Kafka's CorruptSnapshotException message on
//     stderr and the tool goes on, exit 0;
//   - .txnindex files, which Samsa does not write, are reported as unknown
//     files;
//   - while dumping a big .log, a progress line is shown on stderr when
//     stderr is a terminal (never in pipes, files or tests).

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"samsa/broker/record"
	"samsa/tools/internal/tool"
)

const (
	// dumpHeaderUpToMagic is Kafka's HEADER_SIZE_UP_TO_MAGIC: the bytes a
	// batch needs before FileLogInputStream looks at it.
	dumpHeaderUpToMagic = 17
	// dumpMinRecordOverhead is Kafka's LegacyRecord.RECORD_OVERHEAD_V0, the
	// smallest batch size FileLogInputStream accepts.
	dumpMinRecordOverhead = 14
	// dumpMaxIndexFile bounds an index file read into memory (Kafka's
	// segment.index.bytes cannot exceed 2 GiB; real ones are 10 MiB).
	dumpMaxIndexFile = 1 << 30
)

// dumpOpts are the parsed kafka-dump-log options.
type dumpOpts struct {
	files          []string
	printData      bool
	offsets        bool // --offsets-decoder
	deep           bool
	verifyOnly     bool
	sanityOnly     bool
	skipRecordMeta bool
	maxMessageSize int
}

// dumpState collects what Kafka reports on stderr after all files.
type dumpState struct {
	out      *bufio.Writer
	stderr   io.Writer
	progress *progress
	// indexMismatches: absolute index path → (index offset, log offset),
	// newest first as Kafka's prepended Scala list prints them.
	indexMismatches dumpPairs
	timeErrors      timeIndexErrors
	// nonConsecutive: absolute log path → (offset, next offset), newest first.
	nonConsecutive dumpPairs
}

// dumpPairs keeps per-file lists in the order files were first seen.
type dumpPairs struct {
	files []string
	pairs map[string][][2]int64
}

func (p *dumpPairs) add(file string, a, b int64, prepend bool) {
	if p.pairs == nil {
		p.pairs = make(map[string][][2]int64)
	}
	if _, ok := p.pairs[file]; !ok {
		p.files = append(p.files, file)
	}
	if prepend {
		p.pairs[file] = append([][2]int64{{a, b}}, p.pairs[file]...)
	} else {
		p.pairs[file] = append(p.pairs[file], [2]int64{a, b})
	}
}

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-dump-log",
		Usage: "parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "files", Usage: "REQUIRED: the comma separated list of data and index log files to be dumped"},
			&cli.BoolFlag{Name: "print-data-log", Usage: "print the messages' content when dumping data logs"},
			&cli.BoolFlag{Name: "verify-index-only", Usage: "just verify the index log without printing its content"},
			&cli.BoolFlag{Name: "index-sanity-check", Usage: "just check the index sanity without printing its content (the check run on broker startup)"},
			&cli.BoolFlag{Name: "deep-iteration", Usage: "use deep instead of shallow iteration; implied by --print-data-log"},
			&cli.BoolFlag{Name: "skip-record-metadata", Usage: "skip printing metadata for each record"},
			&cli.IntFlag{Name: "max-message-size", Value: 5 * 1024 * 1024, Usage: "size of largest message"},
			&cli.StringFlag{Name: "key-decoder-class", Usage: "only kafka.serializer.StringDecoder is supported"},
			&cli.StringFlag{Name: "value-decoder-class", Usage: "only kafka.serializer.StringDecoder is supported"},
			&cli.BoolFlag{Name: "offsets-decoder", Usage: "parse the log data as offset data from the __consumer_offsets topic"},
			&cli.BoolFlag{Name: "transaction-log-decoder", Usage: "not supported by Samsa"},
		},
		Action: func(c *cli.Context) error {
			o, err := parseDumpOpts(c)
			if err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			if err := runDumpLog(env, o); err != nil {
				fmt.Fprintln(env.Stderr, err)
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

func parseDumpOpts(c *cli.Context) (*dumpOpts, error) {
	if !c.IsSet("files") {
		return nil, tool.Error(`Missing required argument "[files]"`)
	}
	for _, name := range []string{"key-decoder-class", "value-decoder-class"} {
		if v := c.String(name); v != "" && v != "kafka.serializer.StringDecoder" {
			return nil, tool.Errorf("Samsa's kafka-dump-log supports only kafka.serializer.StringDecoder for --%s, not %s", name, v)
		}
	}
	if c.Bool("transaction-log-decoder") {
		return nil, tool.Error("Samsa's kafka-dump-log does not support --transaction-log-decoder")
	}
	o := &dumpOpts{
		files:          strings.Split(c.String("files"), ","),
		printData:      c.Bool("print-data-log") || c.Bool("offsets-decoder") || c.IsSet("key-decoder-class") || c.IsSet("value-decoder-class"),
		offsets:        c.Bool("offsets-decoder"),
		verifyOnly:     c.Bool("verify-index-only"),
		sanityOnly:     c.Bool("index-sanity-check"),
		skipRecordMeta: c.Bool("skip-record-metadata"),
		maxMessageSize: c.Int("max-message-size"),
	}
	o.deep = c.Bool("deep-iteration") || o.printData
	return o, nil
}

func runDumpLog(env tool.Env, o *dumpOpts) error {
	st := &dumpState{out: bufio.NewWriterSize(env.Stdout, 64*1024), stderr: env.Stderr, progress: newProgress(env.Stderr, env.Stdout)}
	defer st.out.Flush()
	for _, file := range o.files {
		fmt.Fprintf(st.out, "Dumping %s\n", file)
		var err error
		switch filepath.Ext(file) {
		case ".log":
			err = st.dumpLog(file, o)
		case ".index":
			err = st.dumpIndex(file, o)
		case ".timeindex":
			err = st.dumpTimeIndex(file, o)
		case ".snapshot":
			err = st.dumpProducerSnapshot(file)
		case ".txnindex":
			err = st.dumpTxnIndex(file)
		default:
			st.out.Flush()
			fmt.Fprintf(env.Stderr, "Ignoring unknown file %s\n", file)
		}
		if err != nil {
			st.out.Flush()
			return err
		}
	}
	st.out.Flush()
	st.printErrors(env.Stderr)
	return nil
}

func (st *dumpState) printErrors(w io.Writer) {
	for _, f := range st.indexMismatches.files {
		fmt.Fprintf(w, "Mismatches in :%s\n", f)
		for _, p := range st.indexMismatches.pairs[f] {
			fmt.Fprintf(w, "  Index offset: %d, log offset: %d\n", p[0], p[1])
		}
	}
	st.timeErrors.print(w)
	for _, f := range st.nonConsecutive.files {
		fmt.Fprintf(w, "Non-consecutive offsets in %s\n", f)
		for _, p := range st.nonConsecutive.pairs[f] {
			fmt.Fprintf(w, "  %d is followed by %d\n", p[0], p[1])
		}
	}
}

// segmentBaseOffset parses the base offset from a segment file name
// ("00000000000000000042.log" → 42), as Kafka's split("\\.")(0).toLong.
func segmentBaseOffset(file string) (int64, error) {
	name := filepath.Base(file)
	stem, _, _ := strings.Cut(name, ".")
	n, err := strconv.ParseInt(stem, 10, 64)
	if err != nil {
		return 0, tool.JavaException{Class: "java.lang.NumberFormatException", Msg: fmt.Sprintf("For input string: %q", stem)}
	}
	return n, nil
}

func absPath(file string) string {
	if a, err := filepath.Abs(file); err == nil {
		return a
	}
	return file
}

// segmentReader iterates over the batches of a .log file as Kafka's
// FileLogInputStream does: it stops silently at a batch that does not fit in
// the file (a torn tail), and fails on a batch size below the minimum.
type segmentReader struct {
	f    *os.File
	name string
	size int64
	pos  int64
	end  int64
	buf  []byte
}

func openSegment(file string) (*segmentReader, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, tool.NoSuchFile(file, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, tool.NoSuchFile(file, err)
	}
	return &segmentReader{f: f, name: filepath.Base(file), size: fi.Size(), end: fi.Size()}, nil
}

// slice restricts the reader to [pos, pos+n) of the file (Kafka's
// FileRecords.slice).
func (r *segmentReader) slice(pos, n int64) {
	r.pos = pos
	r.end = r.size
	if n >= 0 && pos+n < r.end {
		r.end = pos + n
	}
}

// next returns the batch at the current position and its position, or nil
// at the end. Only magic 2 is supported; Samsa never writes magic 0/1.
func (r *segmentReader) next() (record.Batch, int64, error) {
	if r.end-r.pos < dumpHeaderUpToMagic {
		return nil, 0, nil
	}
	var head [dumpHeaderUpToMagic]byte
	if _, err := r.f.ReadAt(head[:], r.pos); err != nil {
		return nil, 0, tool.JavaException{Class: "java.io.IOException", Msg: err.Error()}
	}
	size := int32(binary.BigEndian.Uint32(head[8:12]))
	if size < dumpMinRecordOverhead {
		return nil, 0, tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptRecordException", Msg: fmt.Sprintf("Found record size %d smaller than minimum record overhead (%d) in file %s.", size, dumpMinRecordOverhead, r.name)}
	}
	total := int64(size) + record.LogOverhead
	if r.pos > r.end-total {
		return nil, 0, nil
	}
	if magic := int8(head[16]); magic != record.MagicV2 {
		return nil, 0, tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptRecordException", Msg: fmt.Sprintf("Samsa cannot dump message format v%d (found at position %d in %s); it writes only v2", magic, r.pos, r.name)}
	}
	if size < record.MinBatchLength {
		return nil, 0, tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptRecordException", Msg: fmt.Sprintf("Record batch size %d is smaller than the minimum size %d in file %s.", size, record.MinBatchLength, r.name)}
	}
	if int64(cap(r.buf)) < total {
		r.buf = make([]byte, total)
	}
	buf := r.buf[:total]
	if _, err := r.f.ReadAt(buf, r.pos); err != nil {
		return nil, 0, tool.JavaException{Class: "java.io.IOException", Msg: err.Error()}
	}
	pos := r.pos
	r.pos += total
	return record.Batch(buf), pos, nil
}

func (st *dumpState) dumpLog(file string, o *dumpOpts) error {
	start, err := segmentBaseOffset(file)
	if err != nil {
		return err
	}
	fmt.Fprintf(st.out, "Starting offset: %d\n", start)
	r, err := openSegment(file)
	if err != nil {
		return err
	}
	defer r.f.Close()
	defer st.progress.done()
	lastOffset := int64(-1)
	var valid int64
	var rec record.Record
	for {
		b, pos, err := r.next()
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		st.progress.update(file, pos, r.size)
		printBatchLevel(st.out, b, pos)
		if o.deep {
			it, err := b.Iter(0)
			if err != nil {
				return tool.JavaException{Class: "org.apache.kafka.common.KafkaException", Msg: err.Error()}
			}
			for it.Next(&rec) {
				off := b.BaseOffset() + int64(rec.OffsetDelta)
				if lastOffset != -1 && off != lastOffset+1 {
					st.nonConsecutive.add(absPath(file), lastOffset, off, true)
				}
				lastOffset = off
				if err := printRecord(st.out, b, &rec, pos, o); err != nil {
					return err
				}
			}
			if err := it.Err(); err != nil {
				return tool.JavaException{Class: "org.apache.kafka.common.errors.CorruptRecordException", Msg: err.Error()}
			}
		}
		valid += int64(b.Size())
	}
	if trailing := r.size - valid; trailing > 0 {
		fmt.Fprintf(st.out, "Found %d invalid bytes at the end of %s\n", trailing, filepath.Base(file))
	}
	return nil
}

// printBatchLevel prints Kafka's printBatchLevel line for a v2 batch.
func printBatchLevel(w io.Writer, b record.Batch, pos int64) {
	fmt.Fprintf(w, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t",
		b.BaseOffset(), b.LastOffset(), b.NumRecords(), b.BaseSequence(), b.LastSequence(), b.ProducerID(), b.ProducerEpoch(),
		b.PartitionLeaderEpoch(), b.IsTransactional(), b.IsControl())
	fmt.Fprintf(w, " position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
		pos, b.TimestampType(), b.MaxTimestamp(), b.Size(), b.Magic(), strings.ToUpper(b.Compression().String()), b.CRC(), b.CRCValid())
}

// recordTimestamp is Kafka's DefaultRecord timestamp: the batch's max
// timestamp under LogAppendTime, else first timestamp plus the delta.
func recordTimestamp(b record.Batch, r *record.Record) int64 {
	if b.TimestampType() == record.TimestampLogAppendTime {
		return b.MaxTimestamp()
	}
	return b.FirstTimestamp() + r.TimestampDelta
}

// recordSequence is Kafka's DefaultRecord sequence: -1 without a base
// sequence, else base + offset delta wrapping past MaxInt32 to 0.
func recordSequence(b record.Batch, r *record.Record) int32 {
	base := b.BaseSequence()
	if base == record.NoSequence {
		return record.NoSequence
	}
	const maxInt32 = int32(^uint32(0) >> 1)
	if base > maxInt32-r.OffsetDelta {
		return r.OffsetDelta - (maxInt32 - base) - 1
	}
	return base + r.OffsetDelta
}

// printRecord prints one record line of --deep-iteration in Kafka 2.8's
// form.
func printRecord(w io.Writer, b record.Batch, r *record.Record, pos int64, o *dumpOpts) error {
	prefix := "| "
	size := func(p []byte) int {
		if p == nil {
			return -1
		}
		return len(p)
	}
	if !o.skipRecordMeta {
		fmt.Fprintf(w, "%soffset: %d isValid: true crc: null keySize: %d valueSize: %d %s: %d baseOffset: %d lastOffset: %d baseSequence: %d lastSequence: %d producerEpoch: %d partitionLeaderEpoch: %d batchSize: %d magic: %d compressType: %s position: %d",
			prefix, b.BaseOffset()+int64(r.OffsetDelta), size(r.Key), size(r.Value), b.TimestampType(), recordTimestamp(b, r),
			b.BaseOffset(), b.LastOffset(), b.BaseSequence(), b.LastSequence(), b.ProducerEpoch(), b.PartitionLeaderEpoch(),
			b.Size(), b.Magic(), strings.ToUpper(b.Compression().String()), pos)
		prefix = " "
		keys := make([]string, len(r.Headers))
		for i, h := range r.Headers {
			keys[i] = h.Key
		}
		fmt.Fprintf(w, " sequence: %d headerKeys: [%s]", recordSequence(b, r), strings.Join(keys, ","))
		if b.IsControl() {
			fmt.Fprint(w, controlText(r))
		}
	}
	if o.printData && !b.IsControl() {
		key, value, hasKey, hasValue := tool.JavaString(r.Key), tool.JavaString(r.Value), r.Key != nil, r.Value != nil
		if o.offsets {
			var err error
			if key, value, err = formatOffsetsRecord(r); err != nil {
				fmt.Fprintln(w)
				return err
			}
			hasKey, hasValue = true, true
		}
		if hasKey {
			fmt.Fprintf(w, "%skey: %s", prefix, key)
		}
		if hasValue {
			fmt.Fprintf(w, " payload: %s", value)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// controlText describes a control record as Kafka's dump does.
func controlText(r *record.Record) string {
	typ, err := record.ParseControlKey(r.Key)
	if err != nil {
		return " controlType: UNKNOWN(-1)"
	}
	switch typ {
	case record.ControlAbort, record.ControlCommit:
		m, err := record.ParseEndTxnMarker(r.Key, r.Value)
		if err != nil {
			return fmt.Sprintf(" controlType: INVALID(%d)", typ)
		}
		name := "ABORT"
		if m.Commit {
			name = "COMMIT"
		}
		return fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: %d", name, m.CoordinatorEpoch)
	case record.ControlLeaderChange:
		return fmt.Sprintf(" controlType: LEADER_CHANGE(%d)", typ)
	}
	return fmt.Sprintf(" controlType: UNKNOWN(%d)", typ)
}
