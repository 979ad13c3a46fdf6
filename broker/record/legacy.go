package record

import (
	"encoding/binary"
	"fmt"
)

// Layout of a legacy message (magic 0 and 1), Kafka's LegacyRecord:
//
//	offset      int64
//	messageSize int32   size of everything below
//	crc         uint32  CRC-32 (IEEE) of magic..end
//	magic       int8    0 or 1
//	attributes  int8    bits 0-2 codec (gzip, snappy, lz4), bit 3 timestamp type (v1)
//	timestamp   int64   v1 only
//	key         int32 length (-1 = null) + bytes
//	value       int32 length (-1 = null) + bytes
const (
	legacyOffCRC   = 12
	legacyOffMagic = 16
	legacyOffAttrs = 17
	legacyOffTS    = 18

	// MinMessageSizeV0 and MinMessageSizeV1 are the smallest messageSize
	// values (null key and value): Kafka's RECORD_OVERHEAD_V0/V1.
	MinMessageSizeV0 = 4 + 1 + 1 + 4 + 4
	MinMessageSizeV1 = MinMessageSizeV0 + 8
)

// Message is one decoded legacy message (magic 0 or 1). Key and Value alias
// the input (or decompressed) bytes; nil means null.
type Message struct {
	Offset     int64
	Magic      int8
	Attributes int8
	// Timestamp is NoTimestamp for magic 0. For inner messages of a v1
	// LogAppendTime wrapper it is the wrapper's timestamp.
	Timestamp int64
	Key       []byte
	Value     []byte
}

// Compression returns the codec of a wrapper message (CodecNone for plain
// messages).
func (m *Message) Compression() Codec { return Codec(m.Attributes & attrCompressionMask) }

// TimestampType returns TimestampNone for magic 0, otherwise the type from
// attribute bit 3.
func (m *Message) TimestampType() TimestampType {
	if m.Magic == MagicV0 {
		return TimestampNone
	}
	if m.Attributes&attrTimestampType != 0 {
		return TimestampLogAppendTime
	}
	return TimestampCreateTime
}

// Magic returns the magic byte of the first batch or message in buf (the
// byte at offset 16 in all three formats), so a produce payload can be
// routed to the v2 or the legacy path. Fewer than 17 bytes is
// ErrShortBatch, a magic other than 0, 1 or 2 ErrCorrupt.
func Magic(buf []byte) (int8, error) {
	if len(buf) <= offMagic {
		return 0, fmt.Errorf("%w: %d bytes, magic is at %d", ErrShortBatch, len(buf), offMagic)
	}
	m := int8(buf[offMagic])
	if m < MagicV0 || m > MagicV2 {
		return 0, corruptf("unknown magic %d", m)
	}
	return m, nil
}

// NextMessage splits the first legacy message off buf and decodes it
// (shallowly: a wrapper's value stays compressed). It checks the size
// bounds, the magic (0 or 1) and the CRC-32.
//
// Errors: ErrShortBatch for a partial trailing message; ErrCorrupt for a
// size below the minimum for its magic or above MaxBatchLength, a bad
// magic or a CRC mismatch; ErrInvalidRecord for key/value lengths that do
// not fit the message.
func NextMessage(buf []byte) (m Message, rest []byte, err error) {
	if len(buf) < LogOverhead {
		return Message{}, nil, fmt.Errorf("%w: %d bytes left, need %d", ErrShortBatch, len(buf), LogOverhead)
	}
	size := int32(binary.BigEndian.Uint32(buf[offBatchLength:]))
	if size < MinMessageSizeV0 || size > MaxBatchLength {
		return Message{}, nil, corruptf("message size %d out of range", size)
	}
	if len(buf) > legacyOffMagic {
		if mg := int8(buf[legacyOffMagic]); mg != MagicV0 && mg != MagicV1 {
			return Message{}, nil, corruptf("message magic %d, want 0 or 1", mg)
		}
	}
	total := LogOverhead + int(size)
	if len(buf) < total {
		return Message{}, nil, fmt.Errorf("%w: message of %d bytes, %d present", ErrShortBatch, total, len(buf))
	}
	p := buf[:total:total]
	m.Offset = int64(binary.BigEndian.Uint64(p))
	m.Magic = int8(p[legacyOffMagic])
	if m.Magic == MagicV1 && size < MinMessageSizeV1 {
		return Message{}, nil, corruptf("v1 message size %d below %d", size, MinMessageSizeV1)
	}
	if stored, computed := binary.BigEndian.Uint32(p[legacyOffCRC:]), crc32IEEE(p[legacyOffMagic:]); stored != computed {
		return Message{}, nil, corruptf("message at offset %d: CRC %08x, computed %08x", m.Offset, stored, computed)
	}
	m.Attributes = int8(p[legacyOffAttrs])
	pos := legacyOffTS
	m.Timestamp = NoTimestamp
	if m.Magic == MagicV1 {
		m.Timestamp = int64(binary.BigEndian.Uint64(p[pos:]))
		pos += 8
	}
	if m.Key, pos, err = readLegacyBytes(p, pos, "key"); err != nil {
		return Message{}, nil, err
	}
	if m.Value, pos, err = readLegacyBytes(p, pos, "value"); err != nil {
		return Message{}, nil, err
	}
	if pos != total {
		return Message{}, nil, invalidf("message at offset %d: %d trailing bytes", m.Offset, total-pos)
	}
	return m, buf[total:], nil
}

// readLegacyBytes reads an int32 length and that many bytes. As in Kafka's
// LegacyRecord.sliceDelimited, any negative length is null with no bytes.
func readLegacyBytes(p []byte, pos int, what string) ([]byte, int, error) {
	if len(p)-pos < 4 {
		return nil, 0, invalidf("message %s length truncated", what)
	}
	n := int32(binary.BigEndian.Uint32(p[pos:]))
	pos += 4
	if n < 0 {
		return nil, pos, nil
	}
	if int(n) > len(p)-pos {
		return nil, 0, invalidf("message %s length %d with %d bytes left", what, n, len(p)-pos)
	}
	return p[pos : pos+int(n) : pos+int(n)], pos + int(n), nil
}

// appendMessage appends a legacy message with a correct CRC to dst.
func appendMessage(dst []byte, m *Message) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.Offset))
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // size, crc: filled below
	dst = append(dst, byte(m.Magic), byte(m.Attributes))
	if m.Magic == MagicV1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(m.Timestamp))
	}
	dst = appendLegacyBytes(dst, m.Key)
	dst = appendLegacyBytes(dst, m.Value)
	p := dst[start:]
	binary.BigEndian.PutUint32(p[offBatchLength:], uint32(len(p)-LogOverhead))
	binary.BigEndian.PutUint32(p[legacyOffCRC:], crc32IEEE(p[legacyOffMagic:]))
	return dst
}

func appendLegacyBytes(dst, p []byte) []byte {
	if p == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(p)))
	return append(dst, p...)
}

// messageSize returns the encoded size of m including LogOverhead.
func messageSize(m *Message) int {
	n := LogOverhead + MinMessageSizeV0 + len(m.Key) + len(m.Value)
	if m.Magic == MagicV1 {
		n += 8
	}
	return n
}
