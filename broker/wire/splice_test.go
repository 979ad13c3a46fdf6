package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fillFetch fills resp with two topics of two partitions whose records come from fill.
func fillFetch(resp *kmsg.FetchResponse, fill func(i int) []byte) *kmsg.FetchResponse {
	i := 0
	for _, name := range []string{"alpha", "beta"} {
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic = name
		for p := int32(0); p < 2; p++ {
			pp := kmsg.NewFetchResponseTopicPartition()
			pp.Partition = p
			pp.HighWatermark = 100 + int64(i)
			pp.RecordBatches = fill(i)
			tp.Partitions = append(tp.Partitions, pp)
			i++
		}
		resp.Topics = append(resp.Topics, tp)
	}
	return resp
}

func records(i int) []byte {
	n := []int{0, 1, 300, 70000}[i]
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i + j)
	}
	return b
}

func parsedFetch(t *testing.T, v int16) *Request {
	t.Helper()
	body := kmsg.NewPtrFetchRequest()
	body.SetVersion(v)
	req, err := ParseRequest(AppendRequest(nil, body, 9, nil)[4:])
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestWireSplicedMatchesEncoded checks that a Spliced fetch response writes exactly the bytes
// AppendResponse writes for the same response with the records inline, for non-flexible and
// flexible versions (int32 and uvarint length prefixes).
func TestWireSplicedMatchesEncoded(t *testing.T) {
	for _, v := range []int16{0, 4, 11, 12} {
		req := parsedFetch(t, v)
		want := AppendResponse(nil, req, fillFetch(kmsg.NewPtrFetchResponse(), records))

		resp := kmsg.NewPtrFetchResponse()
		sp := NewSpliced(resp)
		fillFetch(resp, func(i int) []byte { return sp.Placeholder(BytesRegion(records(i))) })
		var out bytes.Buffer
		if err := sp.WriteResponse(&out, req); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("v%d: spliced %d bytes, encoded %d bytes, differ", v, out.Len(), len(want))
		}
		if sp.Regions() != 4 {
			t.Fatalf("regions %d", sp.Regions())
		}
	}
}

// shortRegion claims more bytes than it writes, like a segment truncated under a reader.
type shortRegion struct{}

func (shortRegion) Len() int64 { return 10 }
func (shortRegion) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write([]byte{1, 2, 3})
	return int64(n), err
}

func TestWireSplicedErrors(t *testing.T) {
	req := parsedFetch(t, 4)

	resp := kmsg.NewPtrFetchResponse()
	sp := NewSpliced(resp)
	fillFetch(resp, func(i int) []byte {
		if i == 1 {
			return sp.Placeholder(shortRegion{})
		}
		return nil
	})
	if err := sp.WriteResponse(io.Discard, req); err == nil {
		t.Fatal("short region: no error")
	}

	// A placeholder that never made it into the response.
	resp = kmsg.NewPtrFetchResponse()
	sp = NewSpliced(resp)
	sp.Placeholder(BytesRegion{1})
	if err := sp.WriteResponse(io.Discard, req); !errors.Is(err, errSplice) {
		t.Fatalf("missing placeholder: %v", err)
	}

	// Placeholders stored out of order.
	resp = kmsg.NewPtrFetchResponse()
	sp = NewSpliced(resp)
	a, b := sp.Placeholder(BytesRegion{1}), sp.Placeholder(BytesRegion{2})
	fillFetch(resp, func(i int) []byte {
		switch i {
		case 0:
			return b
		case 1:
			return a
		}
		return nil
	})
	if err := sp.WriteResponse(io.Discard, req); !errors.Is(err, errSplice) {
		t.Fatalf("out of order: %v", err)
	}
}

// countingWriter counts Write calls.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// sendOnlyRegion hides BytesRegion's AppendTo, so WriteResponse must use WriteTo.
type sendOnlyRegion struct{ b BytesRegion }

func (r sendOnlyRegion) Len() int64                         { return r.b.Len() }
func (r sendOnlyRegion) WriteTo(w io.Writer) (int64, error) { return r.b.WriteTo(w) }

// TestWireSplicedInlineSmallRegions: regions that can copy themselves and total at most
// MaxInlineRegionBytes go out in one write with the same bytes; regions that cannot, or more
// bytes, take the writev/WriteTo path.
func TestWireSplicedInlineSmallRegions(t *testing.T) {
	small := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, []int{0, 1, 300, 4000}[i]) }
	for _, v := range []int16{4, 11, 12} {
		req := parsedFetch(t, v)
		want := AppendResponse(nil, req, fillFetch(kmsg.NewPtrFetchResponse(), small))
		for _, inline := range []bool{true, false} {
			resp := kmsg.NewPtrFetchResponse()
			sp := NewSpliced(resp)
			fillFetch(resp, func(i int) []byte {
				if inline {
					return sp.Placeholder(BytesRegion(small(i)))
				}
				return sp.Placeholder(sendOnlyRegion{BytesRegion(small(i))})
			})
			var out countingWriter
			if err := sp.WriteResponse(&out, req); err != nil {
				t.Fatalf("v%d inline=%v: %v", v, inline, err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("v%d inline=%v: %d bytes, encoded %d bytes, differ", v, inline, out.Len(), len(want))
			}
			if inline && out.writes != 1 {
				t.Fatalf("v%d: %d writes for an inline response", v, out.writes)
			}
			if !inline && out.writes < 4 {
				t.Fatalf("v%d: %d writes, want one per region and the parts between", v, out.writes)
			}
		}
	}
	// A region that copies fewer bytes than it claims fails instead of framing garbage.
	resp := kmsg.NewPtrFetchResponse()
	sp := NewSpliced(resp)
	fillFetch(resp, func(i int) []byte { return sp.Placeholder(lyingRegion{}) })
	if err := sp.WriteResponse(io.Discard, parsedFetch(t, 11)); err == nil {
		t.Fatal("a short inline region was written")
	}
}

// lyingRegion claims 10 bytes and copies 3.
type lyingRegion struct{}

func (lyingRegion) Len() int64                          { return 10 }
func (lyingRegion) WriteTo(w io.Writer) (int64, error)  { return 0, errors.New("not used") }
func (lyingRegion) AppendTo(dst []byte) ([]byte, error) { return append(dst, 1, 2, 3), nil }
