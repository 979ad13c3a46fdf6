package storage

// Recent batch places: the fetch path's answer for offsets near the log end
// without reading the .log (issue #10).
//
// Followers and tail consumers fetch from at or just below the log end.
// Finding the batch that holds such an offset used to mean reading batch
// headers from the last offset index entry on (up to index.interval.bytes
// of small batches, one pread each), and bounding the region meant reading
// them again. The active segment therefore remembers where its last few
// batches lie, and every published logEnd carries a view of them, so a
// lock-free reader gets, in one atomic load, a description of the tail that
// is consistent with the end offset and position it reads against.
//
// The views are immutable: a view is a slice [lo:hi] of a backing array in
// which no element below hi is ever written again. Appends write at
// len(buf) only; when the array is full, or when a truncation removes
// places, the writer switches to a fresh array. So readers holding an older
// logEnd never race with the writer, and a truncated place can never be seen
// in a view published after the truncation.

// recentBatchesWindow is how many of the last batches a view holds.
const recentBatchesWindow = 16

// recentBatchesCap is the capacity of a backing array: one allocation of
// 128 places (4 KiB) serves 112 appended batches. A segment's first array
// holds recentBatchesFirstCap (1 KiB), so a partition that takes few
// appends costs little.
const (
	recentBatchesCap      = 128
	recentBatchesFirstCap = 2 * recentBatchesWindow
)

// batchPlace is where one batch of a segment's .log lies.
type batchPlace struct {
	base, last int64 // first and last offset
	pos, size  int64 // bytes [pos, pos+size) of the .log
}

// end returns the position after the batch.
func (p batchPlace) end() int64 { return p.pos + p.size }

// recentBatches is the writer's side, owned by Log.mu (a Segment field):
// the places of the segment's last appended batches, contiguous in the
// file and ending at the segment's size, or empty when unknown.
type recentBatches struct {
	buf []batchPlace
}

// add records a batch appended at the end of the segment. The caller
// (Segment.appendLocked) adds only after the bytes were written.
func (r *recentBatches) add(p batchPlace) {
	if n := len(r.buf); n > 0 && r.buf[n-1].end() != p.pos {
		r.reset() // not contiguous: never expected, start over
	}
	if len(r.buf) == cap(r.buf) {
		c := recentBatchesCap
		if r.buf == nil {
			c = recentBatchesFirstCap
		}
		fresh := make([]batchPlace, 0, c)
		r.buf = append(fresh, r.buf[max(0, len(r.buf)-recentBatchesWindow+1):]...)
	}
	r.buf = append(r.buf, p)
}

// reset forgets every place (roll, recovery, full truncation).
func (r *recentBatches) reset() { r.buf = nil }

// truncateTo drops the places of batches at or after pos (a batch boundary
// the segment is cut to), moving the kept ones to a fresh array so that
// views published before the truncation are never overwritten.
func (r *recentBatches) truncateTo(pos int64) {
	n := 0
	for n < len(r.buf) && r.buf[n].end() <= pos {
		n++
	}
	if n == 0 || r.buf[n-1].end() != pos {
		r.reset()
		return
	}
	keep := r.buf[max(0, n-recentBatchesWindow):n]
	r.buf = append(make([]batchPlace, 0, recentBatchesFirstCap), keep...)
}

// view returns the last places if they describe the tail of a segment of
// size bytes ending at offset end, else nil. The slice is capped so that a
// reader cannot append into the writer's array.
func (r *recentBatches) view(size, end int64) []batchPlace {
	n := len(r.buf)
	if n == 0 || r.buf[n-1].end() != size || r.buf[n-1].last+1 != end {
		return nil
	}
	return r.buf[max(0, n-recentBatchesWindow):n:n]
}

// findRecent answers Segment.translateOffset from places (a view) when it
// can: the first batch with last offset >= offset lying wholly below maxPos.
// ok is false when the view cannot tell (offset before its first batch, or
// maxPos not at one of its boundaries), and the caller reads the file.
// Every batch before places[0] ends before places[0].base <= offset, so
// it never holds the answer.
func findRecent(places []batchPlace, offset, maxPos int64) (p batchPlace, found, ok bool) {
	if len(places) == 0 || offset < places[0].base || maxPos < places[0].pos {
		return p, false, false
	}
	for _, q := range places {
		if q.end() > maxPos {
			// maxPos must be a boundary of the view to trust a miss.
			return p, false, q.pos == maxPos
		}
		if q.last >= offset {
			return q, true, true
		}
	}
	return p, false, places[len(places)-1].end() == maxPos
}

// boundaryRecent answers Segment.batchBoundaryAtOrBelow from places: the
// largest batch boundary <= limit, when limit lies within the view (every
// boundary from places[0].pos to the view's end is a place's start or the
// last place's end).
func boundaryRecent(places []batchPlace, limit int64) (int64, bool) {
	if len(places) == 0 || limit < places[0].pos {
		return 0, false
	}
	if last := places[len(places)-1]; limit >= last.end() {
		return last.end(), true
	}
	b := places[0].pos
	for _, q := range places {
		if q.pos > limit {
			break
		}
		b = q.pos
	}
	return b, true
}
