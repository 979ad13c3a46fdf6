// Package record owns Kafka's record formats, byte-compatible with Kafka
// 2.8: record batch v2 (magic 2), the legacy message sets v0/v1 (magic 0
// and 1), the compression codecs, and the conversions between them.
//
// # What it owns
//
//   - Batch, a zero-copy view over one v2 batch: header accessors (no
//     decoding, no allocation), in-place setters (SetBaseOffset and
//     SetPartitionLeaderEpoch are outside the CRC; SetLogAppendTime
//     recomputes it), CRC-32C (Castagnoli, hardware accelerated).
//   - NextBatch, which splits a stream of batches (a segment, a produce
//     payload, a fetch response), and ReadHeaderAt, which reads only the
//     61-byte header of the batch at a file position (storage recovery,
//     index rebuild).
//   - Batch.Validate (framing, CRC, and with Limits.Deep every record),
//     Batch.Records / Batch.Iter (decoding), Build (encoding).
//   - Message, NextMessage, ReadMessageSet, ValidateMessageSet for magic
//     0/1; ConvertToV2 (produce v0–v2 up-conversion) and ConvertFromV2
//     (fetch v0–v3 down-conversion); Magic to route a produce payload.
//
// # Never imports
//
// Nothing of Samsa: not storage, not net, no kmsg request or response type,
// not zkutil, no logger. It is tier 0: pure functions over byte slices, so
// it can be fuzzed alone. (Tests use kmsg.RecordBatch and kmsg.MessageV1
// as an independent encoder to cross-check the layout.)
//
// # Concurrency
//
// Every function is safe for concurrent use. A Batch is a plain []byte:
// concurrent reads are fine, the setters mutate it in place and need the
// caller's exclusion. Decoded records and messages alias their input (or a
// freshly decompressed buffer that nothing else references).
//
// # Errors
//
// Every error wraps one sentinel; map them to Kafka error codes with
// errors.Is:
//
//	ErrCorrupt                -> CORRUPT_MESSAGE (2): CRC, magic, sizes, undecodable compression
//	ErrDecompressedTooLarge   -> wraps ErrCorrupt: output over the caller's cap (bomb)
//	ErrInvalidRecord          -> INVALID_RECORD (87): counts, offset deltas, varints, lengths
//	ErrTooLarge               -> MESSAGE_TOO_LARGE (10): over Limits.MaxBatchBytes
//	ErrUnsupportedCompression -> UNSUPPORTED_COMPRESSION_TYPE (76): zstd in magic 0/1
//	ErrShortBatch             -> no Kafka code: a torn write or a partial trailing batch
//
// # Record batch v2 (magic 2), Kafka's DefaultRecordBatch
//
// All integers big-endian. The CRC covers attributes through the end of the
// batch, so baseOffset and partitionLeaderEpoch can be rewritten without
// recomputing it.
//
//	offset  size  field
//	     0     8  baseOffset             int64
//	     8     4  batchLength            int32  bytes after this field (>= 49)
//	    12     4  partitionLeaderEpoch   int32
//	    16     1  magic                  int8   = 2
//	    17     4  crc                    uint32 CRC-32C of bytes 21..end
//	    21     2  attributes             int16  bits 0-2 codec (0 none, 1 gzip, 2 snappy,
//	                                            3 lz4, 4 zstd), bit 3 timestamp type
//	                                            (1 = LogAppendTime), bit 4 transactional,
//	                                            bit 5 control
//	    23     4  lastOffsetDelta        int32
//	    27     8  firstTimestamp         int64
//	    35     8  maxTimestamp           int64
//	    43     8  producerId             int64
//	    51     2  producerEpoch          int16
//	    53     4  baseSequence           int32
//	    57     4  records count          int32
//	    61     …  records                (the whole section compressed when codec != 0)
//
// Each record (zig-zag varints, see Record):
//
//	length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
//	keyLength varint (< 0 null) | key | valueLength varint (< 0 null) | value |
//	headerCount varint | { headerKeyLength varint | headerKey | headerValueLength varint (< 0 null) | headerValue }
//
// Any negative key, value or header value length reads as null, as in
// Kafka's DefaultRecord.readFrom; Samsa writes -1. A negative header key
// length or header count is invalid.
//
// # Message v0 / v1 (magic 0 / 1), Kafka's LegacyRecord
//
//	offset  size  field
//	     0     8  offset                 int64  (a wrapper: offset of its last inner message)
//	     8     4  messageSize            int32  bytes after this field (>= 14 v0, >= 22 v1)
//	    12     4  crc                    uint32 CRC-32 (IEEE) of bytes 16..end
//	    16     1  magic                  int8   0 or 1
//	    17     1  attributes             int8   bits 0-2 codec (gzip, snappy, lz4),
//	                                            bit 3 timestamp type (v1)
//	    18     8  timestamp              int64  v1 only
//	     …     4  keyLength              int32  < 0 = null (written as -1)
//	     …     …  key
//	     …     4  valueLength            int32  < 0 = null (written as -1)
//	     …     …  value                  for a wrapper: the compressed inner message set
//
// A message set is a concatenation of messages. A compressed "wrapper"
// message holds an inner message set of the same magic, never nested; v1
// inner offsets are relative (absolute = wrapperOffset - lastInner + inner),
// v0 inner offsets are absolute.
//
// # Compression
//
// Only the records section (v2) or the wrapper value (v0/v1) is compressed,
// in the framing Kafka's Java clients write and read: gzip; snappy in
// xerial framing (magic 82 'SNAPPY' 00, two int32 versions, then
// length-prefixed raw blocks; raw unframed blocks are also accepted); LZ4
// frame format with 64 KiB blocks (magic 0 frames carry the descriptor
// checksum Kafka computed over the magic number too, KAFKA-3160: we rewrite
// it before reading and produce it when writing magic 0); zstd (v2 only).
//
// Every decompression has a hard output cap: readers are wrapped in
// io.LimitReader(cap+1) and size fields (snappy block lengths) are checked
// against the remaining budget before anything is allocated. zstd decoders
// are pooled, synchronous, and refuse windows over 16 MiB. A 1 GiB gzip or
// zstd bomb with a 1 MiB cap fails in milliseconds.
//
// # Fuzzing
//
// FuzzRecordBatch, FuzzRecordMessageSet, FuzzRecordConvert and
// FuzzRecordDecompress state their invariants in their comments; seeds live
// in testdata/fuzz (regenerate the hand-made ones with
// `go test -run TestRecordWriteFuzzCorpus -update-corpus`).
package record
