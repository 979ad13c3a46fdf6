package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

func sizePrefix(n int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(n))
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestWireReadFrameRejectsBadSizes(t *testing.T) {
	cases := []struct {
		name   string
		prefix []byte
		max    int32
		want   error
	}{
		{"negative", sizePrefix(-1), 1024, ErrBadFrame},
		{"min int32", sizePrefix(-1 << 31), 1024, ErrBadFrame},
		{"above max", sizePrefix(1025), 1024, ErrFrameTooLarge},
		{"max int32", sizePrefix(1<<31 - 1), 0, ErrFrameTooLarge},
		// KIP-498: a TLS ClientHello read as a size is 0x16030100 = 369,295,616.
		{"tls client hello", []byte{0x16, 0x03, 0x01, 0x00}, 0, ErrFrameTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &countingReader{r: io.MultiReader(bytes.NewReader(tc.prefix), bytes.NewReader(make([]byte, 4096)))}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := ReadFrame(in, tc.max, nil)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got != nil {
				t.Fatalf("got %d bytes", len(got))
			}
			if in.n != 4 {
				t.Fatalf("read %d bytes, want only the 4-byte prefix", in.n)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 1024 {
				t.Fatalf("allocated %d bytes for a rejected frame", d)
			}
		})
	}
}

// TestWireReadFramePrefixFromBufio: through a *bufio.Reader (peeked in place) the prefix
// gives the same errors as through any reader, and costs no allocation.
func TestWireReadFramePrefixFromBufio(t *testing.T) {
	br := func(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
	if _, err := ReadFrame(br(nil), 0, nil); err != io.EOF {
		t.Fatalf("empty stream: err = %v, want io.EOF", err)
	}
	if _, err := ReadFrame(br([]byte{0, 0}), 0, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("torn prefix: err = %v", err)
	}
	if _, err := ReadFrame(br(sizePrefix(-1)), 0, nil); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("negative size: err = %v", err)
	}
	// AllocsPerRun(1, f) calls f twice (a warm-up, then the run).
	r := br(append(append(append(sizePrefix(3), 1, 2, 3), append(sizePrefix(1), 9)...), append(sizePrefix(1), 9)...))
	buf := make([]byte, 0, 8)
	got, err := ReadFrame(r, 0, buf)
	if err != nil || !bytes.Equal(got, []byte{1, 2, 3}) {
		t.Fatalf("first frame: %v %v", err, got)
	}
	if n := testing.AllocsPerRun(1, func() { got, err = ReadFrame(r, 0, buf) }); n != 0 || err != nil || !bytes.Equal(got, []byte{9}) {
		t.Fatalf("second frame: %v %v, %v allocations", err, got, n)
	}
}

func TestWireReadFrameShortAndClean(t *testing.T) {
	// Clean EOF before a frame.
	if _, err := ReadFrame(bytes.NewReader(nil), 0, nil); err != io.EOF {
		t.Fatalf("empty stream: err = %v, want io.EOF", err)
	}
	// Torn prefix.
	if _, err := ReadFrame(bytes.NewReader([]byte{0, 0}), 0, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("torn prefix: err = %v", err)
	}
	// Short body, with and without a reusable buffer.
	in := append(sizePrefix(100), make([]byte, 60)...)
	if _, err := ReadFrame(bytes.NewReader(in), 0, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short body: err = %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader(in), 0, make([]byte, 0, 200)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short body into buf: err = %v", err)
	}
	// Zero-size frame is framing-valid (ParseRequest rejects it).
	got, err := ReadFrame(bytes.NewReader(sizePrefix(0)), 0, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("zero frame: %v %d", err, len(got))
	}
}

func TestWireReadFrameBodies(t *testing.T) {
	for _, size := range []int{1, 100, frameChunk - 1, frameChunk, frameChunk + 1, 5*frameChunk + 7} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(i * 7)
		}
		stream := append(append(sizePrefix(int32(size)), body...), sizePrefix(3)...)
		stream = append(stream, 1, 2, 3)
		r := bytes.NewReader(stream)
		got, err := ReadFrame(r, 0, nil)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("size %d: err %v, equal %v", size, err, bytes.Equal(got, body))
		}
		buf := make([]byte, 0, 16)
		got, err = ReadFrame(r, 0, buf)
		if err != nil || !bytes.Equal(got, []byte{1, 2, 3}) || &got[0] != &buf[:1][0] {
			t.Fatalf("second frame: %v %v", err, got)
		}
	}
}

// TestWireReadFrameGrowsWithReceivedBytes checks that a peer claiming a large frame and then
// stopping costs memory in proportion to what it sent, not to the claim.
func TestWireReadFrameGrowsWithReceivedBytes(t *testing.T) {
	in := append(sizePrefix(DefaultMaxRequestSize), make([]byte, 1000)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFrame(bytes.NewReader(in), 0, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 4*frameChunk {
		t.Fatalf("allocated %d bytes after receiving 1000 of a claimed %d", d, DefaultMaxRequestSize)
	}
}

// TestWireReadFrameGrowsFromBuf checks that a frame larger than the caller's buffer starts in
// that buffer (no new memory for the bytes it holds) and then doubles: a 5 MiB frame read into
// a 3 MiB buffer allocates one 6 MiB buffer (not 1+2+4+5 MiB, nor 8 MiB: at most twice the
// bytes held), and a 7 MiB frame after it fits.
func TestWireReadFrameGrowsFromBuf(t *testing.T) {
	size := 5 * frameChunk
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 13)
	}
	buf := make([]byte, 0, 3*frameChunk)
	in := bytes.NewReader(append(sizePrefix(int32(size)), body...))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := ReadFrame(in, 0, buf)
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("err %v, equal %v", err, bytes.Equal(got, body))
	}
	if cap(got) != 6*frameChunk {
		t.Fatalf("grew to a %d-byte buffer, want %d", cap(got), 6*frameChunk)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 6*frameChunk+64<<10 {
		t.Fatalf("allocated %d bytes for a %d-byte frame into a %d-byte buffer", d, size, cap(buf))
	}
	// Grown from a 6 MiB buffer holding 6 MiB, a 7 MiB frame gets 8 MiB: the next power of two.
	in = bytes.NewReader(append(sizePrefix(int32(7*frameChunk)), make([]byte, 7*frameChunk)...))
	if got, err = ReadFrame(in, 0, got); err != nil || cap(got) != 8*frameChunk {
		t.Fatalf("7 MiB frame: err %v, cap %d", err, cap(got))
	}
	// A fresh buffer (nil) grows to the frame's exact size: a one-off frame keeps no slack.
	in = bytes.NewReader(append(sizePrefix(int32(size)), body...))
	if got, err = ReadFrame(in, 0, nil); err != nil || cap(got) != size {
		t.Fatalf("5 MiB frame into nil: err %v, cap %d", err, cap(got))
	}
}
