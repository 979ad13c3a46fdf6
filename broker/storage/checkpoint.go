package storage

// Checkpoint text format, shared by the four offset checkpoints in a log
// directory root and by leader-epoch-checkpoint in a partition directory
// (Kafka CheckpointFile / CheckpointReadBuffer):
//
//	0              <- format version, always 0
//	3              <- number of entry lines that follow
//	foo 0 1234     <- one entry per line, fields separated by whitespace
//	foo 1 987
//	bar 0 0
//
// Kafka's reader accepts an empty file and a file holding only the version
// line as "no entries"; so do we. Everything else must match exactly: the
// version must be 0, every line must parse, and the count must equal the
// number of entry lines. Unlike Kafka we also reject duplicate keys, which
// Kafka never writes.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"samsa/kafka"
)

// Names of the checkpoint files in a log directory root and in a partition
// directory.
const (
	RecoveryPointCheckpointFile  = "recovery-point-offset-checkpoint"
	ReplicationCheckpointFile    = "replication-offset-checkpoint"
	LogStartOffsetCheckpointFile = "log-start-offset-checkpoint"
	CleanerOffsetCheckpointFile  = "cleaner-offset-checkpoint"
	LeaderEpochCheckpointFile    = "leader-epoch-checkpoint"
)

// checkpointVersion is the only format version Kafka has written.
const checkpointVersion = 0

// maxCheckpointLine bounds one line of a checkpoint file. A topic name is at
// most 249 characters and the numbers at most 20 digits each, so real lines
// are far shorter; the bound only stops a corrupt file from growing a buffer.
const maxCheckpointLine = 4096

// ErrMalformedCheckpoint is wrapped by every error that reports a checkpoint
// file whose content cannot be parsed (bad version, bad line, count
// mismatch, duplicate key). Test with errors.Is.
var ErrMalformedCheckpoint = errors.New("storage: malformed checkpoint file")

// CheckpointError describes a malformed checkpoint file: which file, which
// line (1-based; 0 when the problem is not tied to one line) and what is
// wrong. It unwraps to ErrMalformedCheckpoint.
type CheckpointError struct {
	File   string // path or name given by the caller; may be empty
	Line   int
	Reason string
}

// Error implements error.
func (e *CheckpointError) Error() string {
	name := e.File
	if name == "" {
		name = "checkpoint"
	}
	if e.Line > 0 {
		return fmt.Sprintf("storage: malformed checkpoint file %s line %d: %s", name, e.Line, e.Reason)
	}
	return fmt.Sprintf("storage: malformed checkpoint file %s: %s", name, e.Reason)
}

// Unwrap returns ErrMalformedCheckpoint.
func (e *CheckpointError) Unwrap() error { return ErrMalformedCheckpoint }

// splitCheckpointFields splits a line the way Java's line.split("\\s+") does,
// which is what Kafka's readers use: a leading separator yields an empty
// first field (so the line is malformed), trailing separators are ignored.
func splitCheckpointFields(line string) []string {
	isSpace := func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	var fields []string
	for i := 0; ; {
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		fields = append(fields, line[i:j])
		for j < len(line) && isSpace(line[j]) {
			j++
		}
		if j == len(line) {
			break
		}
		i = j
	}
	// Java drops trailing empty strings.
	for len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	return fields
}

// readCheckpoint parses the checkpoint text format from r, calling entry for
// each entry line with its fields. name is used in error messages only.
// It returns the number of entry lines. It never panics and never allocates
// more than maxCheckpointLine per line.
func readCheckpoint(r io.Reader, name string, entry func(fields []string) error) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxCheckpointLine)
	lineNo := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		lineNo++
		return sc.Text(), true
	}
	scanErr := func() error {
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return &CheckpointError{File: name, Line: lineNo + 1, Reason: fmt.Sprintf("line longer than %d bytes", maxCheckpointLine)}
			}
			return fmt.Errorf("storage: read checkpoint file %s: %w", name, err)
		}
		return nil
	}

	line, ok := next()
	if !ok {
		return 0, scanErr() // empty file: no entries, as in Kafka
	}
	version, err := strconv.ParseInt(line, 10, 32)
	if err != nil {
		return 0, &CheckpointError{File: name, Line: lineNo, Reason: fmt.Sprintf("bad version line %q", line)}
	}
	if version != checkpointVersion {
		return 0, &CheckpointError{File: name, Line: lineNo, Reason: fmt.Sprintf("unsupported version %d", version)}
	}
	line, ok = next()
	if !ok {
		return 0, scanErr() // version only: no entries, as in Kafka
	}
	expected, err := strconv.ParseInt(line, 10, 32)
	if err != nil || expected < 0 {
		return 0, &CheckpointError{File: name, Line: lineNo, Reason: fmt.Sprintf("bad count line %q", line)}
	}
	n := 0
	for {
		line, ok = next()
		if !ok {
			break
		}
		if err := entry(splitCheckpointFields(line)); err != nil {
			return n, &CheckpointError{File: name, Line: lineNo, Reason: fmt.Sprintf("%v in %q", err, line)}
		}
		n++
	}
	if err := scanErr(); err != nil {
		return n, err
	}
	if int64(n) != expected {
		return n, &CheckpointError{File: name, Reason: fmt.Sprintf("expected %d entries, found %d", expected, n)}
	}
	return n, nil
}

// writeCheckpoint encodes the header and the given entry lines (without
// newlines) in the checkpoint text format.
func writeCheckpoint(buf *bytes.Buffer, lines []string) {
	buf.WriteString(strconv.Itoa(checkpointVersion))
	buf.WriteByte('\n')
	buf.WriteString(strconv.Itoa(len(lines)))
	buf.WriteByte('\n')
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
}

// validCheckpointTopic reports whether topic can be written as one field of
// a checkpoint line and read back unchanged.
func validCheckpointTopic(topic string) bool {
	return topic != "" && !strings.ContainsAny(topic, " \t\n\v\f\r")
}

// ReadOffsetCheckpoint parses an offset checkpoint (recovery-point,
// replication, log-start-offset or cleaner-offset checkpoint) from r. name
// only labels errors. An empty input yields an empty map. Malformed content
// returns a *CheckpointError (errors.Is ErrMalformedCheckpoint); I/O errors
// from r are wrapped. The returned map is owned by the caller.
func ReadOffsetCheckpoint(r io.Reader, name string) (map[kafka.TopicPartition]int64, error) {
	out := make(map[kafka.TopicPartition]int64)
	_, err := readCheckpoint(r, name, func(f []string) error {
		if len(f) != 3 {
			return fmt.Errorf("want 3 fields, got %d", len(f))
		}
		if f[0] == "" {
			return errors.New("empty topic")
		}
		p, err := strconv.ParseInt(f[1], 10, 32)
		if err != nil || p < 0 {
			return fmt.Errorf("bad partition %q", f[1])
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad offset %q", f[2])
		}
		tp := kafka.TopicPartition{Topic: f[0], Partition: int32(p)}
		if _, dup := out[tp]; dup {
			return fmt.Errorf("duplicate entry for %s", tp)
		}
		out[tp] = off
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EncodeOffsetCheckpoint returns the checkpoint text for offsets, entries
// sorted by topic then partition so the output is deterministic (Kafka's
// order is its map's). It fails for a topic that is empty or contains
// whitespace, or a negative partition, since such entries could not be read
// back.
func EncodeOffsetCheckpoint(offsets map[kafka.TopicPartition]int64) ([]byte, error) {
	tps := make([]kafka.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		if !validCheckpointTopic(tp.Topic) || tp.Partition < 0 {
			return nil, fmt.Errorf("storage: cannot checkpoint partition %q/%d", tp.Topic, tp.Partition)
		}
		tps = append(tps, tp)
	}
	kafka.SortPartitions(tps)
	lines := make([]string, len(tps))
	for i, tp := range tps {
		lines[i] = tp.Topic + " " + strconv.FormatInt(int64(tp.Partition), 10) + " " + strconv.FormatInt(offsets[tp], 10)
	}
	var buf bytes.Buffer
	writeCheckpoint(&buf, lines)
	return buf.Bytes(), nil
}
