package storage

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"testing"

	"samsa/broker/record"
)

// OffsetForTimestamp returns the first record at or after a timestamp,
// finding it through the time index, also after a restart.
func TestStorageOffsetForTimestamp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	clock := newFakeClock()
	l := openTestLog(t, dir, smallConfig(), clock, nil)
	base := clock.Now().UnixMilli()
	// Batch i holds 3 records with timestamps base+10i, +1, +2.
	for i := 0; i < 40; i++ {
		recs := []record.Record{{OffsetDelta: 0, Value: []byte("a")}, {OffsetDelta: 1, TimestampDelta: 1, Value: []byte("b")}, {OffsetDelta: 2, TimestampDelta: 2, Value: bytes.Repeat([]byte("c"), 200)}}
		b, err := record.Build(record.NewBuildHeader(0, base+int64(10*i)), recs, record.CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	check := func(l *Log) {
		t.Helper()
		for _, c := range []struct {
			ts      int64
			off     int64
			recTS   int64
			present bool
		}{
			{base, 0, base, true},
			{base + 1, 1, base + 1, true},
			{base + 3, 3, base + 10, true},
			{base + 251, 76, base + 251, true},
			{base + 392, 119, base + 392, true},
			{base + 393, 0, 0, false},
			{0, 0, base, true},
		} {
			to, found, err := l.OffsetForTimestamp(c.ts)
			if err != nil || found != c.present || (found && (to.Offset != c.off || to.Timestamp != c.recTS)) {
				t.Fatalf("OffsetForTimestamp(base+%d) = %+v %v %v, want offset %d ts base+%d", c.ts-base, to, found, err, c.off, c.recTS-base)
			}
		}
		if to, _, _ := l.OffsetForTimestamp(LatestTimestamp); to.Offset != 120 {
			t.Fatalf("latest = %d", to.Offset)
		}
		if to, _, _ := l.OffsetForTimestamp(EarliestTimestamp); to.Offset != 0 {
			t.Fatalf("earliest = %d", to.Offset)
		}
	}
	check(l)
	l.Close()
	l2 := openTestLog(t, dir, smallConfig(), clock, nil)
	defer l2.Close()
	check(l2)
}

// With message.timestamp.type=LogAppendTime the broker's clock is stamped
// into every batch (the CRC stays valid).
func TestStorageLogAppendTime(t *testing.T) {
	clock := newFakeClock()
	cfg := smallConfig()
	cfg.MessageTimestampType = LogAppendTime
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), cfg, clock, nil)
	defer l.Close()
	b := testBatch(t, 2, 10, 12345)
	info, err := l.AppendAsLeader(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if info.LogAppendTime != clock.Now().UnixMilli() {
		t.Fatalf("LogAppendTime %d", info.LogAppendTime)
	}
	got := readBatches(t, l, 0, 2)[0]
	if got.TimestampType() != record.TimestampLogAppendTime || got.MaxTimestamp() != clock.Now().UnixMilli() || !got.CRCValid() {
		t.Fatalf("stored batch: %v", got)
	}
}

// FileRegion.WriteTo over a TCP socket uses sendfile and delivers exactly
// the region's bytes; concurrent regions of one file do not interfere
// (sendfile with explicit offsets).
func TestStorageFileRegionSendfile(t *testing.T) {
	clock := newFakeClock()
	l := openTestLog(t, filepath.Join(t.TempDir(), "t-0"), smallConfig(), clock, nil)
	defer l.Close()
	var all []byte
	for i := 0; i < 10; i++ {
		b := testBatch(t, 3, 100, 0)
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for off := int64(0); off < l.LogEndOffset(); {
		res, err := l.Read(off, 700, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Regions[0]
		if n, handled, err := r.sendfile(c); !handled || err != nil || n != r.Len {
			t.Fatalf("sendfile: handled %v, %d of %d bytes, %v", handled, n, r.Len, err)
		}
		var buf bytes.Buffer
		r.copyTo(&buf, 0)
		want = append(want, buf.Bytes()...)
		bs := readAllBatches(t, res)
		off = bs[len(bs)-1].NextOffset()
	}
	c.Close()
	if b := <-got; !bytes.Equal(b, want) || !bytes.Equal(b, all) {
		t.Fatalf("received %d bytes, want %d", len(b), len(all))
	}
}
