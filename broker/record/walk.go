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
		n, d, ok := skipRecord(data)
		if !ok {
			return false
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

// The fields of a record after its length, attributes and timestamp delta,
// in the order skipRecord reads them: every one starts with a varint.
const (
	fieldOffsetDelta = iota
	fieldKey
	fieldValue
	fieldHeaderCount
	fieldHeaderKey
	fieldHeaderValue
)

// skipRecord checks the record at the start of p exactly as decodeRecord
// does and returns its encoded size and offset delta; ok is false where
// decodeRecord would return an error. The varints after the timestamp delta
// are read at a single site (a small state machine over the fields) so that
// the one- and two-byte fast paths stay inline.
func skipRecord(p []byte) (n int, delta int32, ok bool) {
	// The length: one or two bytes for any record under 8 KiB.
	var length int32
	var start int
	switch {
	case len(p) > 0 && p[0] < 0x80:
		u := uint32(p[0])
		length, start = int32(u>>1)^-int32(u&1), 1
	case len(p) > 1 && p[1] < 0x80:
		u := uint32(p[0]&0x7f) | uint32(p[1])<<7
		length, start = int32(u>>1)^-int32(u&1), 2
	default:
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
	headers := int32(0)
	for field := fieldOffsetDelta; ; {
		// One varint at body[pos:].
		var v int32
		switch {
		case pos < end && body[pos] < 0x80:
			u := uint32(body[pos])
			v, pos = int32(u>>1)^-int32(u&1), pos+1
		case pos+1 < end && body[pos+1] < 0x80:
			u := uint32(body[pos]&0x7f) | uint32(body[pos+1])<<7
			v, pos = int32(u>>1)^-int32(u&1), pos+2
		default:
			if v, pos = varintAtSlow(body, pos); pos < 0 {
				return 0, 0, false
			}
		}
		switch field {
		case fieldOffsetDelta:
			delta = v
			field = fieldKey
			continue
		case fieldHeaderCount:
			// Each header takes at least 2 bytes (two length varints).
			if v < 0 || int(v) > (end-pos)/2 {
				return 0, 0, false
			}
			headers = v
		case fieldHeaderKey:
			// Header keys are never null.
			if v < 0 || int(v) > end-pos {
				return 0, 0, false
			}
			pos += int(v)
			field = fieldHeaderValue
			continue
		default: // key, value, header value: -1 is null
			if v != -1 {
				if v < 0 || int(v) > end-pos {
					return 0, 0, false
				}
				pos += int(v)
			}
			switch field {
			case fieldKey:
				field = fieldValue
				continue
			case fieldValue:
				field = fieldHeaderCount
				continue
			}
			headers--
		}
		// After the value, the header count or a header value: another
		// header or the end of the record.
		if headers == 0 {
			break
		}
		field = fieldHeaderKey
	}
	if pos != end {
		return 0, 0, false
	}
	return end, delta, true
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
