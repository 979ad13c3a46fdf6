package wire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
)

// DefaultMaxRequestSize is Kafka's default socket.request.max.bytes (100 MiB).
const DefaultMaxRequestSize int32 = 104857600

// frameChunk is the first allocation for a frame body; beyond it the buffer doubles while
// bytes arrive. Growing with the bytes actually received (instead of allocating the claimed
// size up front) means a peer that announces 100 MiB and then trickles bytes costs at most
// frameChunk plus what it really sent (slowloris, KIP-498's TLS-alert case). 1 MiB is the
// producer's default max.request.size, so typical requests take a single allocation.
const frameChunk = 1 << 20

// ReadFrame reads one size-prefixed frame from r: a 4-byte big-endian int32 size followed by
// that many bytes. It returns the frame body without the prefix.
//
// A negative size returns ErrBadFrame, a size above maxSize returns ErrFrameTooLarge; in both
// cases only the 4 prefix bytes have been read and nothing has been allocated. maxSize <= 0
// means DefaultMaxRequestSize.
//
// buf is reused when its capacity suffices; otherwise the body grows in steps as bytes arrive,
// so memory tracks the bytes received (at most twice them), never the claimed size; when buf
// is given, the grown buffer's capacity is rounded up towards a power of two, so a caller that
// passes each frame back as the next buf regrows it rarely. The returned slice may alias
// buf. io.EOF is returned only when r ends cleanly before the first prefix byte; a stream that
// ends inside a frame returns an error wrapping io.ErrUnexpectedEOF. ReadFrame blocks on r.
func ReadFrame(r io.Reader, maxSize int32, buf []byte) ([]byte, error) {
	n, err := readFrameSize(r, maxSize)
	if err != nil {
		return nil, err
	}
	return readFrameBody(r, n, buf, cap(buf) > 0)
}

// readFrameSize reads and checks a frame's 4-byte size prefix (see ReadFrame).
func readFrameSize(r io.Reader, maxSize int32) (int, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxRequestSize
	}
	prefix, err := readPrefix(r)
	if err != nil {
		return 0, err
	}
	size := int32(prefix)
	if size < 0 {
		return 0, fmt.Errorf("%w: size %d", ErrBadFrame, size)
	}
	if size > maxSize {
		return 0, fmt.Errorf("%w: size %d > %d", ErrFrameTooLarge, size, maxSize)
	}
	return int(size), nil
}

// readPrefix reads the 4-byte size prefix with io.ReadFull's errors (io.EOF before the first
// byte, io.ErrUnexpectedEOF after it). From a *bufio.Reader (the server's connections, peer's)
// it peeks the bytes in place: an array handed to io.ReadFull through the io.Reader interface
// escapes, one allocation per frame.
func readPrefix(r io.Reader) (uint32, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		var prefix [4]byte
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			return 0, err
		}
		return binary.BigEndian.Uint32(prefix[:]), nil
	}
	p, err := br.Peek(4)
	if len(p) < 4 {
		if err == io.EOF && len(p) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	v := binary.BigEndian.Uint32(p)
	_, _ = br.Discard(4) // cannot fail: the 4 bytes are buffered
	return v, nil
}

// readFrameBody reads an n-byte frame body into buf when its capacity suffices, otherwise into
// a buffer grown as bytes arrive (see ReadFrame): buf's own capacity is filled first, since
// that memory is already paid for, then the buffer at least doubles (by frameChunk at first).
// With geometric set (a caller that reuses its buffer, or a FramePool frame), a buffer that
// already holds bytes grows to the next power of two at or above what the frame needs, but
// never beyond twice what it holds: so a reused buffer is regrown a few times over its life
// instead of at every frame a little larger than the last (a follower's fetch answers), and a
// pooled frame grown from nothing ends at a class size.
func readFrameBody(r io.Reader, n int, buf []byte, geometric bool) ([]byte, error) {
	if cap(buf) >= n {
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, shortFrame(err, n)
		}
		return buf, nil
	}
	buf = buf[:0]
	for len(buf) < n {
		want := min(n, max(cap(buf), len(buf)+max(len(buf), frameChunk)))
		if cap(buf) < want {
			size := want
			if geometric && len(buf) > 0 {
				size = max(want, min(1<<bits.Len(uint(want-1)), 2*len(buf)))
			}
			nb := make([]byte, len(buf), size)
			copy(nb, buf)
			buf = nb
		}
		have := len(buf)
		buf = buf[:want]
		if _, err := io.ReadFull(r, buf[have:]); err != nil {
			return nil, shortFrame(err, n)
		}
	}
	return buf, nil
}

func shortFrame(err error, size int) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("wire: reading %d-byte frame: %w", size, err)
}
