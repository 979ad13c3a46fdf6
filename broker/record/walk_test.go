package record

import (
	"errors"
	"strings"
	"testing"
)

// slowWalk is the reference for walkRecords: decode every record with
// RecordIter and apply Validate's offset rules.
func slowWalk(data []byte, count, last int32, gaps bool) bool {
	it := RecordIter{data: data, remaining: count}
	var r Record
	prev := int32(-1)
	for it.Next(&r) {
		d := r.OffsetDelta
		if (!gaps && d != prev+1) || d <= prev || d > last {
			return false
		}
		prev = d
	}
	return it.Err() == nil
}

// walkSeeds returns records sections covering every field shape: null and
// empty keys and values, headers with null values, multi-byte varints
// (values over 63 bytes, deltas over 63, a negative timestamp delta), and
// negative lengths other than -1 for the key, value and header value (null,
// as Kafka reads them).
func walkSeeds() [][]byte {
	recs := []Record{
		{Key: []byte("k"), Value: []byte("v")},
		{OffsetDelta: 1, TimestampDelta: -5, Value: make([]byte, 200)},
		{OffsetDelta: 2, Key: []byte{}, Value: []byte{}, Headers: []Header{{Key: "h", Value: []byte("x")}, {Key: ""}}},
		{OffsetDelta: 3, TimestampDelta: 1 << 40, Key: make([]byte, 70)},
	}
	var all []byte
	var out [][]byte
	for i := range recs {
		one := appendRecord(nil, &recs[i])
		out = append(out, one)
		all = append(all, one...)
	}
	out = append(out, all)
	// Null key, value and header value written as -5, -2 and -7: the
	// record is length, attributes, deltas, key (4), value (5), header
	// count, header key length, "h", header value (9), one byte each.
	odd := appendRecord(nil, &Record{Headers: []Header{{Key: "h"}}})
	odd[4], odd[5], odd[9] = appendVarint(nil, -5)[0], appendVarint(nil, -2)[0], appendVarint(nil, -7)[0]
	out = append(out, odd)
	big := make([]Record, 150)
	var many []byte
	for i := range big {
		big[i] = Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Value: make([]byte, 100)}
		many = appendRecord(many, &big[i])
	}
	return append(out, many)
}

// TestRecordWalkMatchesDecoder checks walkRecords against the decoder on
// valid sections, on every truncation and on single-byte corruptions.
func TestRecordWalkMatchesDecoder(t *testing.T) {
	for si, data := range walkSeeds() {
		n, last := int32(0), int32(0)
		for rest := data; len(rest) > 0; n++ {
			k, d, ok := skipRecord(rest)
			if !ok {
				t.Fatalf("seed %d: record %d rejected", si, n)
			}
			rest, last = rest[k:], d
		}
		if !walkRecords(data, n, last, true) {
			t.Fatalf("seed %d: valid section of %d records rejected", si, n)
		}
		check := func(p []byte, count int32) {
			agreeCommon(t, p)
			for _, gaps := range []bool{false, true} {
				if got, want := walkRecords(p, count, last, gaps), slowWalk(p, count, last, gaps); got != want {
					t.Fatalf("seed %d: walk %t, decoder %t on % x (count %d, gaps %t)", si, got, want, p, count, gaps)
				}
			}
		}
		for cut := range len(data) {
			check(data[:cut], n)
		}
		mutated := make([]byte, len(data))
		for i := range min(len(data), 600) {
			for _, v := range []byte{0x00, 0x01, 0x7f, 0x80, 0xff} {
				copy(mutated, data)
				mutated[i] = v
				check(mutated, n)
			}
		}
		check(data, n+1)
		check(data, n-1)
	}
}

// TestRecordValidateDeepRejectsLikeDecoder checks that a batch whose
// records the walk rejects still gets the decoder's detailed error.
func TestRecordValidateDeepRejectsLikeDecoder(t *testing.T) {
	recs := testRecords(5, 10)
	recs[3].Headers = []Header{{Key: "h", Value: []byte("v")}}
	b, err := Build(NewBuildHeader(0, 1600000000000), recs, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	// Make the header count of record 3 claim 9 headers, then fix the CRC.
	sec := b.RecordsSection()
	pos := 0
	for range 3 {
		k, _, _ := skipRecord(sec[pos:])
		pos += k
	}
	var r Record
	k, err := decodeRecord(sec[pos:], &r)
	if err != nil {
		t.Fatal(err)
	}
	// The header count varint precedes the header key length (1), key "h",
	// value length (1) and value "v": 5 bytes from the end of the record.
	sec[pos+k-5] = byte(appendVarint(nil, 9)[0])
	b.UpdateCRC()
	err = b.Validate(Limits{Deep: true})
	if !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("Validate = %v, want ErrInvalidRecord", err)
	}
	if want := "header count 9"; !strings.Contains(err.Error(), want) {
		t.Fatalf("Validate = %v, want the decoder's message (%q)", err, want)
	}
}

// FuzzRecordWalk compares the in-place walk of Validate's fast path with
// the decoder.
//
// Invariants:
//   - nothing panics;
//   - skipRecord accepts a record exactly when decodeRecord does, with the
//     same size and offset delta;
//   - skipRecordCommon accepts only records skipRecord accepts, with the
//     same size and offset delta;
//   - walkRecords accepts a section exactly when decoding it with
//     RecordIter and applying the offset rules succeeds.
func FuzzRecordWalk(f *testing.F) {
	for _, s := range walkSeeds() {
		f.Add(s, uint8(1), int32(0), false)
		f.Add(s, uint8(4), int32(3), false)
		f.Add(s, uint8(150), int32(149), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, count uint8, last int32, gaps bool) {
		var r Record
		k, err := decodeRecord(data, &r)
		n, d, ok := skipRecord(data)
		if ok != (err == nil) || (ok && (n != k || d != r.OffsetDelta)) {
			t.Fatalf("skipRecord = %d, %d, %t; decodeRecord = %d, %d, %v", n, d, ok, k, r.OffsetDelta, err)
		}
		if cn, cd, cok := skipRecordCommon(data); cok && (!ok || cn != n || cd != d) {
			t.Fatalf("skipRecordCommon = %d, %d; skipRecord = %d, %d, %t", cn, cd, n, d, ok)
		}
		if got, want := walkRecords(data, int32(count), last, gaps), slowWalk(data, int32(count), last, gaps); got != want {
			t.Fatalf("walkRecords = %t, decoder %t", got, want)
		}
	})
}

// agreeCommon fails t unless skipRecordCommon, wherever it accepts a record
// of p, agrees with skipRecord on its size and offset delta.
func agreeCommon(t *testing.T, p []byte) {
	t.Helper()
	for len(p) > 0 {
		cn, cd, cok := skipRecordCommon(p)
		n, d, ok := skipRecord(p)
		if cok && (!ok || cn != n || cd != d) {
			t.Fatalf("skipRecordCommon = %d, %d; skipRecord = %d, %d, %t on % x", cn, cd, n, d, ok, p)
		}
		if !ok {
			return
		}
		p = p[n:]
	}
}

// TestRecordWalkCommonShape checks that the producer records the fast path
// is for (null or short key, 100 B value, no headers, timestamp and offset
// deltas past the one-byte range) take it, and that a record with headers
// does not.
func TestRecordWalkCommonShape(t *testing.T) {
	recs := testRecords(8000, 100)
	for i := range recs {
		recs[i].TimestampDelta = int64(i % 1000) // one or two bytes
	}
	recs[5].Key = nil
	recs[7].Headers = []Header{{Key: "h", Value: []byte("v")}}
	b, err := Build(NewBuildHeader(0, 1600000000000), recs, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	sec := b.RecordsSection()
	for i := 0; len(sec) > 0; i++ {
		n, d, ok := skipRecordCommon(sec)
		if want := i != 7; ok != want {
			t.Fatalf("record %d: skipRecordCommon ok %t, want %t", i, ok, want)
		}
		if !ok {
			n, d, _ = skipRecord(sec)
		}
		if d != int32(i) {
			t.Fatalf("record %d: delta %d", i, d)
		}
		sec = sec[n:]
	}
	if err := b.Validate(Limits{Deep: true}); err != nil {
		t.Fatal(err)
	}
}
