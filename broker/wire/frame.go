package wire

import (
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
// so memory tracks the bytes received, never the claimed size. The returned slice may alias
// buf. io.EOF is returned only when r ends cleanly before the first prefix byte; a stream that
// ends inside a frame returns an error wrapping io.ErrUnexpectedEOF. ReadFrame blocks on r.
func ReadFrame(r io.Reader, maxSize int32, buf []byte) ([]byte, error) {
	n, err := readFrameSize(r, maxSize)
	if err != nil {
		return nil, err
	}
	return readFrameBody(r, n, buf, false)
}

// readFrameSize reads and checks a frame's 4-byte size prefix (see ReadFrame).
func readFrameSize(r io.Reader, maxSize int32) (int, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxRequestSize
	}
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return 0, err
	}
	size := int32(binary.BigEndian.Uint32(prefix[:]))
	if size < 0 {
		return 0, fmt.Errorf("%w: size %d", ErrBadFrame, size)
	}
	if size > maxSize {
		return 0, fmt.Errorf("%w: size %d > %d", ErrFrameTooLarge, size, maxSize)
	}
	return int(size), nil
}

// readFrameBody reads an n-byte frame body into buf when its capacity suffices, otherwise into
// a buffer grown as bytes arrive (see ReadFrame): buf's own capacity is filled first, since
// that memory is already paid for, then the buffer at least doubles (by frameChunk at first).
// With classCaps every buffer it allocates has a power-of-two capacity (a FramePool class),
// at most twice what it holds once full.
func readFrameBody(r io.Reader, n int, buf []byte, classCaps bool) ([]byte, error) {
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
			if classCaps {
				size = 1 << bits.Len(uint(want-1))
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
