package record

// Header is one record header (v2 only). Key is never null in Kafka; Value
// nil means null.
type Header struct {
	Key   string
	Value []byte
}

// Record is one record of a v2 batch, as encoded inside the records section:
//
//	length         varint  size of the rest of the record
//	attributes     int8    unused, 0
//	timestampDelta varlong timestamp - batch firstTimestamp
//	offsetDelta    varint  offset - batch baseOffset
//	keyLength      varint  negative = null (written as -1)
//	key            [keyLength]byte
//	valueLength    varint  negative = null (written as -1)
//	value          [valueLength]byte
//	headersCount   varint
//	headers        { keyLength varint (>= 0), key, valueLength varint (negative = null), value }
//
// As in Kafka's DefaultRecord.readFrom, any negative key, value or header
// value length reads as null with no bytes, not only -1; a negative header
// key length or header count is invalid. The encoder always writes -1 for
// null, so a record decoded and re-encoded may shrink by a few bytes.
//
// Decoded records alias the batch (or decompressed) bytes: Key, Value and
// header values are sub-slices, not copies. Nil Key or Value means null.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte
	Value          []byte
	Headers        []Header
}

// minRecordSize is the smallest encoded record: a 1-byte length followed by
// 6 one-byte fields (attributes, deltas, key and value lengths, header
// count). It bounds how many records a byte slice can hold.
const minRecordSize = 7

// decodeRecord decodes one record from p into r, reusing r.Headers' backing
// array. It returns the number of bytes consumed. Any malformed field
// returns an error wrapping ErrInvalidRecord.
func decodeRecord(p []byte, r *Record) (int, error) {
	length, n := readVarint(p)
	if n == 0 {
		return 0, invalidf("bad record length varint")
	}
	if length < minRecordSize-1 || int64(length) > int64(len(p)-n) {
		return 0, invalidf("record length %d with %d bytes left", length, len(p)-n)
	}
	body := p[n : n+int(length)]
	total := n + int(length)

	r.Attributes = int8(body[0])
	pos := 1
	var k int
	if r.TimestampDelta, k = readVarlong(body[pos:]); k == 0 {
		return 0, invalidf("bad timestamp delta varint")
	}
	pos += k
	if r.OffsetDelta, k = readVarint(body[pos:]); k == 0 {
		return 0, invalidf("bad offset delta varint")
	}
	pos += k
	var err error
	if r.Key, pos, err = readBytesField(body, pos, "key"); err != nil {
		return 0, err
	}
	if r.Value, pos, err = readBytesField(body, pos, "value"); err != nil {
		return 0, err
	}
	count, k := readVarint(body[pos:])
	if k == 0 {
		return 0, invalidf("bad header count varint")
	}
	pos += k
	// Each header takes at least 2 bytes (two length varints).
	if count < 0 || int(count) > (len(body)-pos)/2 {
		return 0, invalidf("header count %d with %d bytes left", count, len(body)-pos)
	}
	r.Headers = r.Headers[:0]
	for range count {
		klen, k := readVarint(body[pos:])
		if k == 0 {
			return 0, invalidf("bad header key length varint")
		}
		pos += k
		if klen < 0 || int(klen) > len(body)-pos {
			return 0, invalidf("header key length %d with %d bytes left", klen, len(body)-pos)
		}
		key := string(body[pos : pos+int(klen)])
		pos += int(klen)
		var val []byte
		if val, pos, err = readBytesField(body, pos, "header value"); err != nil {
			return 0, err
		}
		r.Headers = append(r.Headers, Header{Key: key, Value: val})
	}
	if pos != len(body) {
		return 0, invalidf("record length %d but fields use %d bytes", length, pos)
	}
	return total, nil
}

// readBytesField reads a varint length (negative = null, as Kafka reads it)
// and that many bytes from body at pos.
func readBytesField(body []byte, pos int, what string) ([]byte, int, error) {
	n, k := readVarint(body[pos:])
	if k == 0 {
		return nil, 0, invalidf("bad %s length varint", what)
	}
	pos += k
	if n < 0 {
		return nil, pos, nil
	}
	if int(n) > len(body)-pos {
		return nil, 0, invalidf("%s length %d with %d bytes left", what, n, len(body)-pos)
	}
	return body[pos : pos+int(n) : pos+int(n)], pos + int(n), nil
}

// appendRecord appends the encoding of r to dst.
func appendRecord(dst []byte, r *Record) []byte {
	dst = appendVarint(dst, int32(recordBodySize(r)))
	dst = append(dst, byte(r.Attributes))
	dst = appendVarlong(dst, r.TimestampDelta)
	dst = appendVarint(dst, r.OffsetDelta)
	dst = appendBytesField(dst, r.Key)
	dst = appendBytesField(dst, r.Value)
	dst = appendVarint(dst, int32(len(r.Headers)))
	for _, h := range r.Headers {
		dst = appendVarint(dst, int32(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytesField(dst, h.Value)
	}
	return dst
}

func appendBytesField(dst, p []byte) []byte {
	if p == nil {
		return appendVarint(dst, -1)
	}
	dst = appendVarint(dst, int32(len(p)))
	return append(dst, p...)
}

// recordBodySize returns the size of r after its length varint.
func recordBodySize(r *Record) int {
	n := 1 + sizeofVarlong(r.TimestampDelta) + sizeofVarint(r.OffsetDelta) +
		bytesFieldSize(r.Key) + bytesFieldSize(r.Value) + sizeofVarint(int32(len(r.Headers)))
	for _, h := range r.Headers {
		n += sizeofVarint(int32(len(h.Key))) + len(h.Key) + bytesFieldSize(h.Value)
	}
	return n
}

// recordSize returns the full encoded size of r.
func recordSize(r *Record) int {
	body := recordBodySize(r)
	return sizeofVarint(int32(body)) + body
}

func bytesFieldSize(p []byte) int {
	if p == nil {
		return 1
	}
	return sizeofVarint(int32(len(p))) + len(p)
}
