package record

import (
	"errors"
	"fmt"
)

// ReadMessageSet decodes a legacy message set (magic 0 or 1) deeply: plain
// messages are returned as they are, wrapper messages are decompressed and
// replaced by their inner messages with absolute offsets (v1 inner offsets
// are relative: absolute = wrapperOffset - lastInnerOffset + inner) and,
// under a v1 LogAppendTime wrapper, the wrapper's timestamp.
//
// maxDecompressed bounds the total number of bytes decompressed from all
// wrappers of the set (0 means DefaultMaxDecompressed), so many small
// bombs cannot add up.
//
// Errors: a partial trailing message returns the complete messages before
// it together with an error wrapping ErrShortBatch (Kafka ignores such a
// tail). Anything else returns nil messages and ErrCorrupt (sizes, CRC,
// undecodable compressed value, ErrDecompressedTooLarge),
// ErrUnsupportedCompression (zstd or unknown codec in a wrapper) or
// ErrInvalidRecord (nested compression, inner magic different from the
// wrapper's, empty or null wrapper value, mixed magic in the set).
func ReadMessageSet(buf []byte, maxDecompressed int) ([]Message, error) {
	if maxDecompressed <= 0 {
		maxDecompressed = DefaultMaxDecompressed
	}
	budget := maxDecompressed
	out := make([]Message, 0, min(len(buf)/(LogOverhead+MinMessageSizeV0), 1024))
	first := int8(-1)
	for len(buf) > 0 {
		m, rest, err := NextMessage(buf)
		if err != nil {
			if errors.Is(err, ErrShortBatch) {
				return out, err
			}
			return nil, err
		}
		buf = rest
		if first < 0 {
			first = m.Magic
		} else if m.Magic != first {
			return nil, invalidf("message at offset %d has magic %d, set started with %d", m.Offset, m.Magic, first)
		}
		if m.Compression() == CodecNone {
			out = append(out, m)
			continue
		}
		if out, err = appendInner(out, &m, &budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendInner decompresses wrapper w and appends its inner messages to out.
func appendInner(out []Message, w *Message, budget *int) ([]Message, error) {
	codec := w.Compression()
	if codec != CodecGzip && codec != CodecSnappy && codec != CodecLZ4 {
		return nil, fmt.Errorf("%w: codec %s in a magic %d message", ErrUnsupportedCompression, codec, w.Magic)
	}
	if w.Value == nil {
		return nil, invalidf("wrapper message at offset %d has a null value", w.Offset)
	}
	src := w.Value
	if codec == CodecLZ4 && w.Magic == MagicV0 {
		src = lz4FixLegacyChecksum(src)
	}
	data, err := decompress(codec, src, *budget)
	if err != nil {
		return nil, fmt.Errorf("%w (wrapper at offset %d)", err, w.Offset)
	}
	*budget -= len(data)
	start := len(out)
	for len(data) > 0 {
		m, rest, err := NextMessage(data)
		if err != nil {
			if errors.Is(err, ErrShortBatch) {
				return nil, corruptf("wrapper at offset %d: truncated inner message", w.Offset)
			}
			return nil, fmt.Errorf("%w (inner message of wrapper at offset %d)", err, w.Offset)
		}
		data = rest
		if m.Magic != w.Magic {
			return nil, invalidf("wrapper at offset %d: inner magic %d, wrapper magic %d", w.Offset, m.Magic, w.Magic)
		}
		if m.Compression() != CodecNone {
			return nil, invalidf("wrapper at offset %d: compressed inner message", w.Offset)
		}
		out = append(out, m)
	}
	inner := out[start:]
	if len(inner) == 0 {
		return nil, invalidf("wrapper at offset %d has no inner messages", w.Offset)
	}
	if w.Magic == MagicV1 {
		base := w.Offset - inner[len(inner)-1].Offset
		for i := range inner {
			inner[i].Offset += base
			if w.TimestampType() == TimestampLogAppendTime {
				inner[i].Timestamp = w.Timestamp
				inner[i].Attributes |= attrTimestampType
			}
		}
	}
	return out, nil
}

// ValidateMessageSet checks a legacy message set: every message's size
// (each top-level message against l.MaxBatchBytes, ErrTooLarge), magic and
// CRC, one magic for the whole set, and with l.Deep the wrappers' inner
// messages as ReadMessageSet does (l.MaxDecompressed bounds the total). A
// partial trailing message is ErrShortBatch.
func ValidateMessageSet(buf []byte, l Limits) error {
	rest := buf
	first := int8(-1)
	for len(rest) > 0 {
		m, next, err := NextMessage(rest)
		if err != nil {
			return err
		}
		if size := len(rest) - len(next); l.MaxBatchBytes > 0 && size > l.MaxBatchBytes {
			return fmt.Errorf("%w: message of %d bytes exceeds %d", ErrTooLarge, size, l.MaxBatchBytes)
		}
		if first < 0 {
			first = m.Magic
		} else if m.Magic != first {
			return invalidf("message at offset %d has magic %d, set started with %d", m.Offset, m.Magic, first)
		}
		rest = next
	}
	if !l.Deep {
		return nil
	}
	_, err := ReadMessageSet(buf, l.MaxDecompressed)
	return err
}
