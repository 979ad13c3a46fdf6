package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ResponseWriterTo is a response that writes its own frame instead of being encoded with
// AppendResponse. A server.Handler returns one when a response carries bytes that should go
// from a file to the socket without passing through user space (Fetch record batches via
// sendfile). Key, GetVersion and the other kmsg.Response methods still describe the response.
//
// WriteResponse writes the complete frame (size prefix, response header, body) for req to w
// and returns an error if it could not write all of it; the caller then closes the connection,
// since the peer's framing is lost. w is the connection itself (a *net.TCPConn for TCP
// listeners), so io.Copy and net.Buffers reach sendfile(2) and writev(2).
type ResponseWriterTo interface {
	kmsg.Response
	WriteResponse(w io.Writer, req *Request) error
}

// Region is a byte range that a Spliced response copies from elsewhere, typically a slice of a
// segment file. WriteTo must write exactly Len bytes to w (for a file: io.Copy(w,
// io.NewSectionReader(f, pos, n)), which becomes sendfile on a TCP connection).
type Region interface {
	Len() int64
	WriteTo(w io.Writer) (int64, error)
}

// InlineRegion is a Region that can also copy its bytes into memory. When all the regions of a
// Spliced response implement it and total at most MaxInlineRegionBytes, WriteResponse copies
// them into the encoded frame and sends it with a single write: for a small response (a
// follower's fetch of the last few records) one pread and one write cost less than writev,
// sendfile and writev.
type InlineRegion interface {
	Region
	// AppendTo appends exactly Len bytes to dst.
	AppendTo(dst []byte) ([]byte, error)
}

// MaxInlineRegionBytes is the largest total of region bytes WriteResponse copies into memory
// instead of sending them with Region.WriteTo (sendfile).
const MaxInlineRegionBytes = 16 << 10

// BytesRegion is a Region over bytes already in memory.
type BytesRegion []byte

// Len returns len(b).
func (b BytesRegion) Len() int64 { return int64(len(b)) }

// WriteTo writes b to w.
func (b BytesRegion) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(b)
	return int64(n), err
}

// AppendTo appends b to dst.
func (b BytesRegion) AppendTo(dst []byte) ([]byte, error) { return append(dst, b...), nil }

// placeholderLen is the size of a Spliced placeholder: a 12-byte per-response random nonce and
// a 4-byte region index.
const placeholderLen = 16

// errSplice reports a Spliced response whose encoding does not contain its placeholders as
// registered (a placeholder stored twice, in a non-bytes field, or not at all).
var errSplice = errors.New("wire: spliced response placeholders do not match the encoding")

// Spliced is a kmsg response in which some bytes fields are stood in for by Regions. Use it
// for Fetch: build the kmsg.FetchResponse as usual, but instead of reading record batches into
// memory set each partition's RecordBatches to s.Placeholder(region). WriteResponse encodes the
// response with kmsg, then writes the encoded parts with writev and each region with its own
// WriteTo (sendfile for file regions), patching each bytes field's length prefix to the
// region's length. The frame never holds the record bytes in memory.
//
// A Spliced is used by one goroutine; it implements ResponseWriterTo.
type Spliced struct {
	kmsg.Response
	nonce   [12]byte
	regions []Region
}

// NewSpliced wraps resp (for example a *kmsg.FetchResponse from req.Body.ResponseKind()).
func NewSpliced(resp kmsg.Response) *Spliced {
	s := &Spliced{Response: resp}
	binary.BigEndian.PutUint64(s.nonce[:8], rand.Uint64())
	binary.BigEndian.PutUint32(s.nonce[8:], rand.Uint32())
	return s
}

// Placeholder registers r and returns the bytes to store in the bytes field that r replaces.
// Each placeholder must be stored in exactly one bytes or nullable-bytes field, and fields must
// be filled in the order the response encodes them (for Fetch: topic order, then partition
// order), which is the natural order of building the response.
func (s *Spliced) Placeholder(r Region) []byte {
	p := make([]byte, placeholderLen)
	copy(p, s.nonce[:])
	binary.BigEndian.PutUint32(p[12:], uint32(len(s.regions)))
	s.regions = append(s.regions, r)
	return p
}

// Regions returns the number of registered regions.
func (s *Spliced) Regions() int { return len(s.regions) }

// splicePart is one piece of a spliced frame: encoded bytes or a region.
type splicePart struct {
	b []byte
	r Region
}

// spliceScratch holds WriteResponse's working buffers between calls, so a connection answering
// many small fetches (a follower's) does not allocate them per response.
type spliceScratch struct {
	buf      []byte
	out      []byte // the whole frame, when the regions are copied inline
	parts    []splicePart
	prefixes []byte
	pending  net.Buffers
}

// maxScratchBuf bounds the encode buffer kept in the pool; a larger one is left to the GC.
const maxScratchBuf = 64 << 10

var scratchPool = sync.Pool{New: func() any { return new(spliceScratch) }}

// WriteResponse implements ResponseWriterTo.
func (s *Spliced) WriteResponse(w io.Writer, req *Request) error {
	sc := scratchPool.Get().(*spliceScratch)
	err := s.writeResponse(w, req, sc)
	if cap(sc.buf) > maxScratchBuf {
		sc.buf = nil
	}
	if cap(sc.out) > maxScratchBuf {
		sc.out = nil
	}
	clear(sc.parts)
	clear(sc.pending)
	sc.parts, sc.prefixes, sc.pending = sc.parts[:0], sc.prefixes[:0], sc.pending[:0]
	scratchPool.Put(sc)
	return err
}

// writeResponse encodes the response, cuts the encoding at the placeholders and writes the
// frame. The steps are separate because each has its own failure: a placeholder that does not
// match is a programming error caught before anything is written (the connection stays usable),
// while a write error loses the peer's framing.
func (s *Spliced) writeResponse(w io.Writer, req *Request, sc *spliceScratch) error {
	buf := s.encode(req, sc)
	total, err := s.cut(buf, sc)
	if err != nil {
		return err
	}
	PutFrameSize(buf, int(total))
	if s.inlinable() {
		return writeInline(w, buf[:4], total, sc)
	}
	return writeParts(w, buf[:4], sc)
}

// encode writes the response header and the kmsg body (placeholders still in it) into the
// scratch buffer, at the request's version: the same version rule as AppendResponse.
func (s *Spliced) encode(req *Request, sc *spliceScratch) []byte {
	if req.Key != apiVersionsKey {
		s.SetVersion(req.Version)
	}
	buf := AppendResponseHeader(sc.buf[:0], &req.Header)
	buf = s.AppendTo(buf)
	sc.buf = buf
	return buf
}

// cut splits the encoding buf into sc.parts: encoded bytes, each region's rewritten length
// prefix, the region, and so on. It finds each placeholder by the response's nonce, in
// registration order, and checks that it sits in a bytes field (its length prefix says 16) so
// a nonce that happens to appear in other data cannot be taken for one. It returns the frame
// size without the 4-byte size prefix.
func (s *Spliced) cut(buf []byte, sc *spliceScratch) (int64, error) {
	flexible := s.IsFlexible()
	parts := sc.parts[:0]
	prefixes := sc.prefixes[:0]
	if need := 5 * len(s.regions); cap(prefixes) < need {
		prefixes = make([]byte, 0, need) // never grows below, so parts may alias it
	}
	total := int64(0)
	cur := 4
	for i := range s.regions {
		at := bytes.Index(buf[cur:], s.nonce[:])
		if at < 0 {
			return 0, fmt.Errorf("%w: region %d not found", errSplice, i)
		}
		at += cur
		if at+placeholderLen > len(buf) || binary.BigEndian.Uint32(buf[at+12:]) != uint32(i) {
			return 0, fmt.Errorf("%w: region %d out of order", errSplice, i)
		}
		pre := 4
		if flexible {
			pre = 1 // uvarint(16+1)
		}
		if at-pre < cur || !placeholderPrefixOK(buf[at-pre:at], flexible) {
			return 0, fmt.Errorf("%w: region %d is not a bytes field", errSplice, i)
		}
		n := s.regions[i].Len()
		if n < 0 || n > math.MaxInt32-1 {
			return 0, fmt.Errorf("%w: region %d length %d", errSplice, i, n)
		}
		p0 := len(prefixes)
		if flexible {
			prefixes = kbin.AppendUvarint(prefixes, uint32(n)+1) // compact bytes: length+1
		} else {
			prefixes = kbin.AppendInt32(prefixes, int32(n))
		}
		parts = append(parts, splicePart{b: buf[cur : at-pre]}, splicePart{b: prefixes[p0:len(prefixes):len(prefixes)]}, splicePart{r: s.regions[i]})
		total += int64(at-pre-cur) + int64(len(prefixes)-p0) + n
		cur = at + placeholderLen
	}
	parts = append(parts, splicePart{b: buf[cur:]})
	sc.parts, sc.prefixes = parts, prefixes
	total += int64(len(buf) - cur)
	if total > math.MaxInt32 {
		return 0, fmt.Errorf("wire: spliced response of %d bytes exceeds a frame", total)
	}
	return total, nil
}

// writeInline copies the regions into one frame and sends it with a single write: for a small
// response, one pread and one write cost less than writev, sendfile and writev (see
// MaxInlineRegionBytes). size is the 4-byte size prefix, total the frame size after it.
func writeInline(w io.Writer, size []byte, total int64, sc *spliceScratch) error {
	out := append(sc.out[:0], size...)
	var err error
	for _, p := range sc.parts {
		if p.r == nil {
			out = append(out, p.b...)
		} else if out, err = p.r.(InlineRegion).AppendTo(out); err != nil {
			return err
		}
	}
	sc.out = out
	if int64(len(out)) != total+4 {
		return fmt.Errorf("wire: inline regions gave a %d-byte frame, want %d", len(out), total+4)
	}
	_, err = w.Write(out)
	return err
}

// writeParts writes the encoded parts with writev (net.Buffers) and each region with its own
// WriteTo (sendfile for a file region on a TCP connection), flushing the pending encoded parts
// before each region so the bytes reach the socket in frame order.
func writeParts(w io.Writer, size []byte, sc *spliceScratch) error {
	pending := append(sc.pending[:0], size)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		out := pending // WriteTo consumes its receiver; keep pending's backing array
		_, err := out.WriteTo(w)
		pending = pending[:0]
		return err
	}
	defer func() { sc.pending = pending }()
	for _, p := range sc.parts {
		if p.r == nil {
			if len(p.b) > 0 {
				pending = append(pending, p.b)
			}
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		n, err := p.r.WriteTo(w)
		if err != nil {
			return err
		}
		if n != p.r.Len() {
			return fmt.Errorf("wire: region wrote %d of %d bytes", n, p.r.Len())
		}
	}
	return flush()
}

// inlinable reports whether every region implements InlineRegion and they total at most
// MaxInlineRegionBytes.
func (s *Spliced) inlinable() bool {
	var n int64
	for _, r := range s.regions {
		if _, ok := r.(InlineRegion); !ok {
			return false
		}
		if n += r.Len(); n > MaxInlineRegionBytes {
			return false
		}
	}
	return true
}

func placeholderPrefixOK(pre []byte, flexible bool) bool {
	if flexible {
		return pre[0] == placeholderLen+1
	}
	return binary.BigEndian.Uint32(pre) == placeholderLen
}
