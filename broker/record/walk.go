package record

// The deep validation of the produce path walks the encoded records in
// place: it reads every length and varint the decoder reads and applies the
// same bounds, but builds no Record, no header key string and no error
// value on the way. A batch the walk rejects is decoded again by the slow
// path (validateRecordsSlow) to produce the detailed error, so both paths
// share one set of messages; FuzzRecordWalk checks that they accept exactly
// the same inputs.

// walkRecords checks the records section data of a batch announcing count
// records with the given last offset delta: every record is well formed
// (the checks of decodeRecord), there are exactly count of them with no
// trailing bytes, and the offset deltas follow the rules of gaps (see
// Limits.AllowOffsetGaps). It reports only whether everything holds.
func walkRecords(data []byte, count, last int32, gaps bool) bool {
	prev := int32(-1)
	for ; count > 0; count-- {
		n, d, ok := skipRecordCommon(data)
		if !ok {
			if n, d, ok = skipRecord(data); !ok {
				return false
			}
		}
		if gaps {
			if d <= prev || d > last {
				return false
			}
		} else if d != prev+1 || d > last {
			return false
		}
		prev = d
		data = data[n:]
	}
	return len(data) == 0
}

// skipRecordCommon is skipRecord for the shape nearly every producer
// record has: a length of one or two bytes, a one-byte timestamp delta, an
// offset delta of one or two bytes, a null or short key, a value length of
// one or two bytes and no headers. It accepts only records skipRecord
// accepts, with the same size and delta; ok false means "not this shape"
// (the caller asks skipRecord, which also names every rejection), so the
// acceptance rules stay skipRecord's alone. Straight-line code with one
// bounds check per field is what makes the 100 B record walk cheap.
func skipRecordCommon(p []byte) (n int, delta int32, ok bool) {
	length, start := varint12(p, 0)
	// The smallest body this shape decodes: attributes, timestamp delta,
	// offset delta, key length, value length, header count.
	if start < 0 || length < 6 || int(length) > len(p)-start {
		return 0, 0, false
	}
	end := start + int(length)
	body := p[start:end]
	// body[0] is the attributes (any value), then the timestamp delta
	// (a varlong of one or two bytes here).
	pos := 2
	if body[1] >= 0x80 {
		if body[2] >= 0x80 {
			return 0, 0, false
		}
		pos = 3
	}
	delta, pos = varint12(body, pos)
	if pos < 0 || pos >= len(body) {
		return 0, 0, false
	}
	// The key: null (any negative length) or one length byte.
	if c := body[pos]; c >= 0x80 {
		return 0, 0, false
	} else if k := int32(c>>1) ^ -int32(c&1); k >= 0 {
		if int(k) > len(body)-pos-1 {
			return 0, 0, false
		}
		pos += int(k)
	}
	v, pos := varint12(body, pos+1)
	if pos < 0 {
		return 0, 0, false
	}
	if v >= 0 {
		if int(v) > len(body)-pos {
			return 0, 0, false
		}
		pos += int(v)
	}
	// No headers: one zero byte, and it ends the record.
	if pos != len(body)-1 || body[pos] != 0 {
		return 0, 0, false
	}
	return end, delta, true
}

// skipRecord checks the record at the start of p exactly as decodeRecord
// does and returns its encoded size and offset delta; ok is false where
// decodeRecord would return an error. Every varint is read by the inlined
// one- and two-byte fast path of varint12, falling back to varintAtSlow.
func skipRecord(p []byte) (n int, delta int32, ok bool) {
	length, start := varint12(p, 0)
	if start < 0 {
		length, start = varintAtSlow(p, 0)
	}
	if start < 0 || length < minRecordSize-1 || int64(length) > int64(len(p)-start) {
		return 0, 0, false
	}
	end := start + int(length)
	body := p[:end]
	pos := start + 1 // attributes: any value
	if pos = skipVarlongAt(body, pos); pos < 0 {
		return 0, 0, false
	}
	var next int
	if delta, next = varint12(body, pos); next < 0 {
		if delta, next = varintAtSlow(body, pos); next < 0 {
			return 0, 0, false
		}
	}
	// Key and value: any negative length is null (readBytesField).
	pos = next
	for range 2 {
		v, next := varint12(body, pos)
		if next < 0 {
			if v, next = varintAtSlow(body, pos); next < 0 {
				return 0, 0, false
			}
		}
		pos = next
		if v >= 0 {
			if int(v) > end-pos {
				return 0, 0, false
			}
			pos += int(v)
		}
	}
	headers, next := varint12(body, pos)
	if next < 0 {
		if headers, next = varintAtSlow(body, pos); next < 0 {
			return 0, 0, false
		}
	}
	pos = next
	// Each header takes at least 2 bytes (two length varints).
	if headers < 0 || int(headers) > (end-pos)/2 {
		return 0, 0, false
	}
	for ; headers > 0; headers-- {
		// The key (a negative length is invalid), then the value (any
		// negative length is null).
		for i := range 2 {
			v, next := varint12(body, pos)
			if next < 0 {
				if v, next = varintAtSlow(body, pos); next < 0 {
					return 0, 0, false
				}
			}
			pos = next
			if i == 1 && v < 0 {
				continue
			}
			if v < 0 || int(v) > end-pos {
				return 0, 0, false
			}
			pos += int(v)
		}
	}
	if pos != end {
		return 0, 0, false
	}
	return end, delta, true
}

// varint12 decodes the one- and two-byte varints at p[pos:] (nearly all
// record fields) and is small enough to inline; next < 0 means the caller
// must use varintAtSlow (longer, truncated or malformed encodings).
func varint12(p []byte, pos int) (v int32, next int) {
	if pos < len(p) {
		u := uint32(p[pos])
		if u < 0x80 {
			return int32(u>>1) ^ -int32(u&1), pos + 1
		}
		if pos+1 < len(p) && p[pos+1] < 0x80 {
			u = u&0x7f | uint32(p[pos+1])<<7
			return int32(u>>1) ^ -int32(u&1), pos + 2
		}
	}
	return 0, -1
}

// varintAtSlow is readVarint at p[pos:]: it returns the value and the
// position after it, or a negative position when the varint is malformed or
// truncated.
func varintAtSlow(p []byte, pos int) (int32, int) {
	if pos < 0 || pos > len(p) {
		return 0, -1
	}
	v, k := readVarint(p[pos:])
	if k == 0 {
		return 0, -1
	}
	return v, pos + k
}

// skipVarlongAt returns the position after the varlong at p[pos:], with the
// acceptance rules of readVarlong (at most 10 bytes), or -1.
func skipVarlongAt(p []byte, pos int) int {
	for i := pos; i < pos+10 && i < len(p); i++ {
		if p[i] < 0x80 {
			return i + 1
		}
	}
	return -1
}
