package record

import (
	"errors"
	"fmt"
)

// CodecProducer, passed as the target codec of ConvertToV2, keeps the codec
// the producer used (Kafka's compression.type=producer).
const CodecProducer Codec = -1

// ConvertToV2 up-converts a legacy message set (magic 0 or 1, as sent by
// Produce v0–v2) to record batch v2, as Kafka's LogValidator does on the
// produce path:
//
//   - all messages of the set, wrappers expanded, go into one v2 batch
//     (nil output for an empty set);
//   - offsets are renumbered densely: baseOffset is the first message's
//     offset and offset deltas are 0..n-1 (the leader assigns real
//     offsets with SetBaseOffset afterwards);
//   - timestamps: a v1 message keeps its timestamp (the wrapper's under a
//     LogAppendTime wrapper); a v0 message has none and gets NoTimestamp
//     (-1). The batch is CreateTime with firstTimestamp = the first
//     message's timestamp, so a v0 set gives firstTimestamp = maxTimestamp
//     = -1 (the broker applies LogAppendTime with SetLogAppendTime);
//   - no producer id, epoch, sequence, leader epoch (all -1), no headers;
//   - codec is the records codec; CodecProducer uses the codec of the
//     set's (last) wrapper message, or none.
//
// A partial trailing message is ignored, as Kafka ignores it; a set with no
// complete message returns ErrShortBatch. Other errors are those of
// ReadMessageSet (maxDecompressed bounds the total decompressed bytes) and
// of Build.
func ConvertToV2(msgSet []byte, codec Codec, maxDecompressed int) ([]byte, error) {
	msgs, err := ReadMessageSet(msgSet, maxDecompressed)
	if err != nil && !(errors.Is(err, ErrShortBatch) && len(msgs) > 0) {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	if codec == CodecProducer {
		codec = CodecNone
		// The wrappers' codecs are gone after expansion; walk the set's
		// top-level messages again (cheap: no decompression).
		for rest := msgSet; len(rest) > 0; {
			m, next, err := NextMessage(rest)
			if err != nil {
				break
			}
			if c := m.Compression(); c != CodecNone {
				codec = c
			}
			rest = next
		}
	}
	if len(msgs) > 1<<31-1 {
		return nil, fmt.Errorf("%w: %d messages in one set", ErrTooLarge, len(msgs))
	}
	first := msgs[0]
	h := NewBuildHeader(first.Offset, first.Timestamp)
	recs := make([]Record, len(msgs))
	for i := range msgs {
		recs[i] = Record{
			TimestampDelta: msgs[i].Timestamp - first.Timestamp,
			OffsetDelta:    int32(i),
			Key:            msgs[i].Key,
			Value:          msgs[i].Value,
		}
	}
	b, err := Build(h, recs, codec)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// DownConvertOptions configures ConvertFromV2.
type DownConvertOptions struct {
	// MinOffset drops records with a smaller offset (the fetch offset),
	// as Kafka's down-conversion does for the first batch of a fetch.
	MinOffset int64
	// MaxDecompressed caps each batch's decompressed records section (0
	// means DefaultMaxDecompressed).
	MaxDecompressed int
	// Uncompressed writes plain messages only. Otherwise a compressed
	// batch becomes one wrapper message compressed with the batch's codec
	// (Kafka's behaviour), except zstd, which magic 0/1 cannot carry and
	// which is always written uncompressed.
	Uncompressed bool
}

// ConvertFromV2 down-converts a stream of v2 batches (a fetch read) to a
// legacy message set of the given magic (0 or 1) for Fetch v0–v3:
//
//   - absolute offsets are kept (base + delta); for a v1 wrapper the inner
//     offsets are relative to its first message and the wrapper carries
//     the last offset, for a v0 wrapper inner offsets are absolute;
//   - v1 timestamps: CreateTime batches give firstTimestamp+delta,
//     LogAppendTime batches give maxTimestamp to every message with the
//     timestamp-type bit set; v1 wrappers carry the largest inner
//     timestamp (or the append time); v0 has no timestamps;
//   - control batches and batches left empty by MinOffset are skipped,
//     headers dropped, producer and transaction fields lost;
//   - magic 0 LZ4 wrappers use the frame checksum Kafka's old clients
//     expect (KAFKA-3160).
//
// A partial trailing batch ends the conversion silently (fetch reads may
// end inside a batch). Corrupt batches or records return an error.
func ConvertFromV2(batches []byte, magic int8, opts DownConvertOptions) ([]byte, error) {
	if magic != MagicV0 && magic != MagicV1 {
		return nil, corruptf("cannot down-convert to magic %d", magic)
	}
	var out []byte
	var msgs []Message
	var rec Record
	for len(batches) > 0 {
		b, rest, err := NextBatch(batches)
		if errors.Is(err, ErrShortBatch) {
			break
		}
		if err != nil {
			return nil, err
		}
		batches = rest
		if b.IsControl() || b.LastOffset() < opts.MinOffset {
			continue
		}
		it, err := b.Iter(opts.MaxDecompressed)
		if err != nil {
			return nil, err
		}
		msgs = msgs[:0]
		var attrs int8
		if magic == MagicV1 && b.TimestampType() == TimestampLogAppendTime {
			attrs = attrTimestampType
		}
		for it.Next(&rec) {
			off := b.BaseOffset() + int64(rec.OffsetDelta)
			if off < opts.MinOffset {
				continue
			}
			m := Message{Offset: off, Magic: magic, Attributes: attrs, Timestamp: NoTimestamp, Key: rec.Key, Value: rec.Value}
			if magic == MagicV1 {
				m.Timestamp = b.FirstTimestamp() + rec.TimestampDelta
				if attrs != 0 {
					m.Timestamp = b.MaxTimestamp()
				}
			}
			msgs = append(msgs, m)
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("%w (batch at offset %d)", err, b.BaseOffset())
		}
		if len(msgs) == 0 {
			continue
		}
		codec := b.Compression()
		if opts.Uncompressed || codec == CodecZstd || codec == CodecNone {
			for i := range msgs {
				out = appendMessage(out, &msgs[i])
			}
			continue
		}
		if out, err = appendWrapper(out, msgs, codec, magic, attrs, b.MaxTimestamp()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendWrapper compresses msgs into one wrapper message of the given magic.
func appendWrapper(out []byte, msgs []Message, codec Codec, magic, attrs int8, appendTime int64) ([]byte, error) {
	size := 0
	for i := range msgs {
		size += messageSize(&msgs[i])
	}
	inner := make([]byte, 0, size)
	maxTS := NoTimestamp
	base := msgs[0].Offset
	for i := range msgs {
		m := msgs[i]
		if m.Timestamp > maxTS {
			maxTS = m.Timestamp
		}
		if magic == MagicV1 {
			m.Offset -= base
		}
		inner = appendMessage(inner, &m)
	}
	value, err := compress(codec, nil, inner)
	if err != nil {
		return nil, err
	}
	if codec == CodecLZ4 && magic == MagicV0 {
		lz4BreakLegacyChecksum(value)
	}
	w := Message{
		Offset:     msgs[len(msgs)-1].Offset,
		Magic:      magic,
		Attributes: attrs | int8(codec),
		Timestamp:  NoTimestamp,
		Value:      value,
	}
	if magic == MagicV1 {
		w.Timestamp = maxTS
		if attrs&attrTimestampType != 0 {
			w.Timestamp = appendTime
		}
	}
	if messageSize(&w)-LogOverhead > MaxBatchLength {
		return nil, fmt.Errorf("%w: wrapper message of %d bytes", ErrTooLarge, messageSize(&w))
	}
	return appendMessage(out, &w), nil
}
