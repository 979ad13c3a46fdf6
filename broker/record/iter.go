package record

import "fmt"

// DefaultMaxDecompressed is the decompression cap used when a caller passes
// 0: 64 MiB, well above Kafka's default message.max.bytes (1 MiB) times
// any realistic compression ratio of a legitimate batch.
const DefaultMaxDecompressed = 64 << 20

// RecordIter iterates over the records of one batch without allocating per
// record (header keys excepted). Create it with Batch.Iter.
//
//	it, err := b.Iter(maxDecompressed)
//	var r record.Record
//	for it.Next(&r) { ... }
//	if err := it.Err(); err != nil { ... }
//
// Records yielded by Next alias the iterator's buffer: copy Key, Value and
// header values to keep them past the batch's lifetime.
type RecordIter struct {
	data      []byte // remaining (decompressed) records section
	remaining int32  // records still announced by the count field
	index     int32
	err       error
}

// Iter returns an iterator over b's records, decompressing the records
// section first (output capped at maxDecompressed bytes; 0 means
// DefaultMaxDecompressed). The iterator reports a record count that does
// not match NumRecords, trailing bytes and malformed records through Err,
// all wrapping ErrInvalidRecord. It does not check the CRC.
func (b Batch) Iter(maxDecompressed int) (*RecordIter, error) {
	it := &RecordIter{}
	if err := b.initIter(it, maxDecompressed); err != nil {
		return nil, err
	}
	return it, nil
}

func (b Batch) initIter(it *RecordIter, maxDecompressed int) error {
	if maxDecompressed <= 0 {
		maxDecompressed = DefaultMaxDecompressed
	}
	count := b.NumRecords()
	if count < 0 {
		return invalidf("negative record count %d", count)
	}
	data := b.RecordsSection()
	if codec := b.Compression(); codec != CodecNone {
		var err error
		if data, err = decompress(codec, data, maxDecompressed); err != nil {
			return fmt.Errorf("%w (batch at offset %d)", err, b.BaseOffset())
		}
	}
	*it = RecordIter{data: data, remaining: count}
	return nil
}

// Next decodes the next record into r (reusing r.Headers' backing array)
// and reports whether there was one. After false, check Err.
func (it *RecordIter) Next(r *Record) bool {
	if it.err != nil {
		return false
	}
	if it.remaining == 0 {
		if len(it.data) != 0 {
			it.err = invalidf("%d bytes after the last record", len(it.data))
		}
		return false
	}
	if len(it.data) == 0 {
		it.err = invalidf("record count says %d more records, data ended", it.remaining)
		return false
	}
	n, err := decodeRecord(it.data, r)
	if err != nil {
		it.err = fmt.Errorf("%w (record index %d)", err, it.index)
		return false
	}
	it.data = it.data[n:]
	it.remaining--
	it.index++
	return true
}

// Err returns the first error met by Next, or nil after a clean end.
func (it *RecordIter) Err() error { return it.err }

// Records decodes all records of b (see Iter for maxDecompressed and the
// errors). Keys, values and header values alias the batch or the
// decompressed buffer.
func (b Batch) Records(maxDecompressed int) ([]Record, error) {
	var it RecordIter
	if err := b.initIter(&it, maxDecompressed); err != nil {
		return nil, err
	}
	// Bound the preallocation by what the data can hold, never by the
	// count field alone.
	n := min(int(it.remaining), len(it.data)/minRecordSize)
	out := make([]Record, 0, n)
	for {
		var r Record
		if !it.Next(&r) {
			break
		}
		out = append(out, r)
	}
	if it.err != nil {
		return nil, it.err
	}
	return out, nil
}
