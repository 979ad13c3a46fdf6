package storage

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"samsa/broker/record"
)

// headerChunk is how many bytes one read fetches while scanning batch
// headers: a page, which holds the headers of ~20 small batches, so a scan
// from an offset index entry (index.interval.bytes, 4096 by default) to
// the batch it looks for costs one or two preads instead of one per batch.
const headerChunk = 4096

var headerChunkPool = sync.Pool{New: func() any { return new([headerChunk]byte) }}

// headerReader reads the batch headers of one segment file in page-sized
// chunks (record.ReadHeaderAt reads one header per pread). It serves a
// header from the chunk in hand when the chunk holds all of it, and reads a
// new chunk starting at the header otherwise. After a batch larger than a
// chunk it reads just a header's bytes (batches of one partition tend to
// be alike: copying a page per big batch would waste the copy). It never
// reads at or past limit, except a whole header starting below it.
//
// A headerReader is used by one goroutine for one scan; release returns
// its buffer to the pool. The zero value with f and limit set is ready.
type headerReader struct {
	f     File
	limit int64
	buf   *[headerChunk]byte
	start int64 // file position of buf[0]
	n     int   // bytes of buf read
	small bool  // the last batch was larger than a chunk
}

// at returns the header of the batch starting at pos, with the errors of
// record.ReadHeaderAt.
func (r *headerReader) at(pos int64) (record.BatchHeader, error) {
	var h record.BatchHeader
	var err error
	if off := pos - r.start; r.buf != nil && off >= 0 && off+record.HeaderSize <= int64(r.n) {
		h, err = record.ParseHeader(r.buf[off:r.n], pos)
	} else {
		h, err = r.read(pos)
	}
	if err == nil {
		r.small = h.Size() > headerChunk
	}
	return h, err
}

func (r *headerReader) read(pos int64) (record.BatchHeader, error) {
	if r.buf == nil {
		r.buf = headerChunkPool.Get().(*[headerChunk]byte)
	}
	want := int64(headerChunk)
	if r.small {
		want = record.HeaderSize
	}
	want = min(want, max(r.limit-pos, record.HeaderSize))
	n, err := r.f.ReadAt(r.buf[:want], pos)
	r.start, r.n = pos, n
	if n < record.HeaderSize && err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return record.BatchHeader{}, fmt.Errorf("storage: read header at %d: %w", pos, err)
	}
	return record.ParseHeader(r.buf[:n], pos)
}

// reset points r at another file (or bound), forgetting the chunk in hand.
func (r *headerReader) reset(f File, limit int64) {
	r.f, r.limit, r.n, r.small = f, limit, 0, false
}

// release returns the buffer to the pool.
func (r *headerReader) release() {
	if r.buf != nil {
		headerChunkPool.Put(r.buf)
		r.buf = nil
	}
}
