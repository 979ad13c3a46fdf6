package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// zstdMaxWindow bounds the window a zstd frame may ask for, and so the
// memory one decode can use. Kafka's producers use zstd level 3, whose
// window is at most 8 MiB.
const zstdMaxWindow = 16 << 20

// compress appends the compressed form of src to dst using codec, in the
// framing Kafka's Java clients write: gzip members, xerial-framed snappy,
// LZ4 frames with 64 KiB independent blocks and no checksums, zstd frames.
func compress(codec Codec, dst, src []byte) ([]byte, error) {
	w := bytes.NewBuffer(dst)
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		zw := gzipWriters.Get().(*gzip.Writer)
		defer func() {
			zw.Reset(io.Discard) // drop the reference to dst
			gzipWriters.Put(zw)
		}()
		zw.Reset(w)
		if _, err := zw.Write(src); err != nil {
			return dst, fmt.Errorf("record: gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return dst, fmt.Errorf("record: gzip: %w", err)
		}
		return w.Bytes(), nil
	case CodecSnappy:
		return xerialEncode(dst, src), nil
	case CodecLZ4:
		zw := lz4Writers.Get().(*lz4.Writer)
		defer func() {
			zw.Reset(nil) // drop the reference to dst
			lz4Writers.Put(zw)
		}()
		zw.Reset(w)
		if _, err := zw.Write(src); err != nil {
			return dst, fmt.Errorf("record: lz4: %w", err)
		}
		if err := zw.Close(); err != nil {
			return dst, fmt.Errorf("record: lz4: %w", err)
		}
		return w.Bytes(), nil
	case CodecZstd:
		return zstdEncoder.EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("%w: codec %d", ErrUnsupportedCompression, codec)
}

// decompress returns the decompressed form of src. It never produces more
// than max bytes: when the output would exceed max it stops reading and
// returns an error wrapping ErrDecompressedTooLarge. Size fields inside the
// compressed data are never trusted for allocation beyond max. Undecodable
// input returns an error wrapping ErrCorrupt.
func decompress(codec Codec, src []byte, max int) ([]byte, error) {
	if max < 0 {
		max = 0
	}
	switch codec {
	case CodecNone:
		if len(src) > max {
			return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrDecompressedTooLarge, len(src), max)
		}
		return src, nil
	case CodecGzip:
		zr := gzipReaders.Get().(*gzip.Reader)
		defer func() {
			_ = zr.Reset(bytes.NewReader(nil)) // drop the reference to src; io.EOF expected
			gzipReaders.Put(zr)
		}()
		if err := zr.Reset(bytes.NewReader(src)); err != nil {
			return nil, corruptf("gzip: %v", err)
		}
		return readCapped(zr, "gzip", max)
	case CodecSnappy:
		return xerialDecode(src, max)
	case CodecLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		defer func() {
			zr.Reset(nil)
			lz4Readers.Put(zr)
		}()
		zr.Reset(bytes.NewReader(src))
		return readCapped(zr, "lz4", max)
	case CodecZstd:
		zr := zstdDecoders.Get().(*zstd.Decoder)
		defer func() {
			// Drop the reference to src before pooling the decoder.
			_ = zr.Reset(nil)
			zstdDecoders.Put(zr)
		}()
		if err := zr.Reset(bytes.NewReader(src)); err != nil {
			return nil, corruptf("zstd: %v", err)
		}
		return readCapped(zr, "zstd", max)
	}
	return nil, corruptf("unknown compression codec %d", codec)
}

// readCapped reads r to the end, failing once more than max bytes come out.
// It reads at most max+1 bytes, so a bomb costs O(max) time and memory. The
// data is read into a pooled scratch buffer and copied out at its exact
// size, so repeated decompression does not re-grow buffers.
func readCapped(r io.Reader, name string, max int) ([]byte, error) {
	scratch := scratchBuffers.Get().(*bytes.Buffer)
	scratch.Reset()
	defer func() {
		if scratch.Cap() <= maxPooledScratch {
			scratchBuffers.Put(scratch)
		}
	}()
	n, err := scratch.ReadFrom(io.LimitReader(r, int64(max)+1))
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, corruptf("%s: %v", name, err)
	}
	if n > int64(max) {
		return nil, fmt.Errorf("%w: %s output exceeds %d bytes", ErrDecompressedTooLarge, name, max)
	}
	return bytes.Clone(scratch.Bytes()), nil
}

// maxPooledScratch is the largest scratch buffer kept for reuse.
const maxPooledScratch = 4 << 20

var (
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	gzipReaders = sync.Pool{New: func() any { return new(gzip.Reader) }}
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}

	scratchBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

	lz4Writers = sync.Pool{New: func() any {
		w := lz4.NewWriter(nil)
		// Kafka's KafkaLZ4BlockOutputStream: 64 KiB blocks, independent,
		// no block or content checksum. Apply errors are impossible for
		// these constant options.
		_ = w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false),
			lz4.BlockChecksumOption(false))
		return w
	}}

	// zstdEncoder is safe for concurrent EncodeAll calls. Level 3 (the
	// library's default) is the level Kafka's producer uses.
	zstdEncoder = mustZstdEncoder()

	// zstdDecoders holds synchronous (concurrency 1) streaming decoders:
	// they start no goroutines, so the pool may drop them without Close.
	zstdDecoders = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
		if err != nil {
			panic("record: zstd decoder options: " + err.Error())
		}
		return d
	}}
)

func mustZstdEncoder() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic("record: zstd encoder options: " + err.Error())
	}
	return e
}
