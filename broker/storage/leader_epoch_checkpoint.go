package storage

// leader-epoch-checkpoint (KIP-101) sits in each partition directory and
// uses the offset checkpoint's text layout with "<epoch> <startOffset>"
// lines, in ascending epoch order (Kafka LeaderEpochCheckpointFile):
//
//	0
//	2
//	0 0
//	3 5120

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// EpochEntry records that leader epoch Epoch began at offset StartOffset:
// the first record the leader of that epoch appended.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// String formats e as Kafka's EpochEntry does.
func (e EpochEntry) String() string {
	return fmt.Sprintf("EpochEntry(epoch=%d, startOffset=%d)", e.Epoch, e.StartOffset)
}

// ReadLeaderEpochCheckpoint parses a leader-epoch-checkpoint from r, keeping
// the file's order. name only labels errors. An empty input yields no
// entries. Malformed content, including a negative epoch or offset (which
// Kafka's cache refuses to load), returns a *CheckpointError.
func ReadLeaderEpochCheckpoint(r io.Reader, name string) ([]EpochEntry, error) {
	var out []EpochEntry
	_, err := readCheckpoint(r, name, func(f []string) error {
		if len(f) != 2 {
			return fmt.Errorf("want 2 fields, got %d", len(f))
		}
		epoch, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil || epoch < 0 {
			return fmt.Errorf("bad leader epoch %q", f[0])
		}
		off, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || off < 0 {
			return fmt.Errorf("bad start offset %q", f[1])
		}
		out = append(out, EpochEntry{Epoch: int32(epoch), StartOffset: off})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EncodeLeaderEpochCheckpoint returns the checkpoint text for entries, in
// the given order. Negative values are refused since they cannot be read
// back.
func EncodeLeaderEpochCheckpoint(entries []EpochEntry) ([]byte, error) {
	lines := make([]string, len(entries))
	for i, e := range entries {
		if e.Epoch < 0 || e.StartOffset < 0 {
			return nil, fmt.Errorf("storage: cannot checkpoint %v", e)
		}
		lines[i] = strconv.FormatInt(int64(e.Epoch), 10) + " " + strconv.FormatInt(e.StartOffset, 10)
	}
	var buf bytes.Buffer
	writeCheckpoint(&buf, lines)
	return buf.Bytes(), nil
}

// readLeaderEpochFile reads a leader-epoch-checkpoint through cf; a missing
// file has no entries.
func readLeaderEpochFile(cf *CheckpointFile) ([]EpochEntry, error) {
	var out []EpochEntry
	err := cf.Read(func(r io.Reader) error {
		e, err := ReadLeaderEpochCheckpoint(r, cf.Path())
		out = e
		return err
	})
	return out, err
}

// writeLeaderEpochFile atomically replaces the file behind cf with entries.
func writeLeaderEpochFile(cf *CheckpointFile, entries []EpochEntry) error {
	data, err := EncodeLeaderEpochCheckpoint(entries)
	if err != nil {
		return err
	}
	return cf.Write(data)
}
