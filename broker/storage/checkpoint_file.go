package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"samsa/kafka"
)

// CheckpointFile reads and atomically replaces one checkpoint file (Kafka
// CheckpointFile). A write goes to "<path>.tmp", is fsynced, renamed over
// path and the directory is fsynced, so a crash leaves either the old or the
// new content, never a mix. A missing file reads as empty. Safe for
// concurrent use; writes are serialised.
type CheckpointFile struct {
	fs   FS     // immutable after NewCheckpointFile
	path string // immutable after NewCheckpointFile
	mu   sync.Mutex
}

// NewCheckpointFile returns a CheckpointFile for path on fsys. It does not
// touch the disk.
func NewCheckpointFile(fsys FS, path string) *CheckpointFile {
	return &CheckpointFile{fs: fsys, path: path}
}

// Path returns the file's path.
func (c *CheckpointFile) Path() string { return c.path }

// Read calls parse with the file's content (a reader valid only during the
// call). A missing file calls parse with an empty reader. I/O errors wrap
// ErrStorage; parse's error is returned as is.
func (c *CheckpointFile) Read(parse func(r io.Reader) error) error {
	f, err := c.fs.OpenFile(c.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return parse(bytes.NewReader(nil))
	}
	if err != nil {
		return storageError("open "+c.path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return storageError("stat "+c.path, err)
	}
	return parse(io.NewSectionReader(f, 0, fi.Size()))
}

// Write atomically replaces the file's content with data: write
// "<path>.tmp", fsync, rename over path, fsync the directory (a
// checkpointBatch of one file). It blocks on both fsyncs. I/O errors wrap
// ErrStorage; on error the file holds its old content (or, when only the
// directory fsync failed, the new content, not yet durable), never a mix.
func (c *CheckpointFile) Write(data []byte) error {
	var b checkpointBatch
	var werr error
	if err := b.stage(c, data, func(err error) { werr = err }); err != nil {
		return err
	}
	b.commit()
	return werr
}

// osCreateTruncWrite are the flags a checkpoint's temp file is opened with.
const osCreateTruncWrite = os.O_CREATE | os.O_WRONLY | os.O_TRUNC

// OffsetCheckpointFile is a CheckpointFile holding per-partition offsets:
// recovery-point-offset-checkpoint, replication-offset-checkpoint,
// log-start-offset-checkpoint or cleaner-offset-checkpoint.
type OffsetCheckpointFile struct {
	f *CheckpointFile
}

// NewOffsetCheckpointFile returns the offset checkpoint at path on fsys.
func NewOffsetCheckpointFile(fsys FS, path string) *OffsetCheckpointFile {
	return &OffsetCheckpointFile{f: NewCheckpointFile(fsys, path)}
}

// Path returns the file's path.
func (o *OffsetCheckpointFile) Path() string { return o.f.Path() }

// Read returns the checkpointed offsets; a missing or empty file gives an
// empty map. Malformed content returns a *CheckpointError naming the file
// and line. The map is owned by the caller.
func (o *OffsetCheckpointFile) Read() (map[kafka.TopicPartition]int64, error) {
	var out map[kafka.TopicPartition]int64
	err := o.f.Read(func(r io.Reader) error {
		m, err := ReadOffsetCheckpoint(r, o.f.path)
		out = m
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Write atomically replaces the file with offsets. It blocks on fsync.
func (o *OffsetCheckpointFile) Write(offsets map[kafka.TopicPartition]int64) error {
	data, err := EncodeOffsetCheckpoint(offsets)
	if err != nil {
		return fmt.Errorf("%w (file %s)", err, o.f.path)
	}
	return o.f.Write(data)
}
