package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func TestWireFramePoolClasses(t *testing.T) {
	p := NewFramePool()
	for _, c := range []struct{ n, capacity int }{{0, 1 << 10}, {1, 1 << 10}, {1 << 10, 1 << 10},
		{1<<10 + 1, 2 << 10}, {100 << 10, 128 << 10}, {1 << 20, 1 << 20}} {
		b := p.Get(c.n)
		if len(b) != c.n || cap(b) != c.capacity {
			t.Fatalf("Get(%d): len %d cap %d, want cap %d", c.n, len(b), cap(b), c.capacity)
		}
		p.Put(b)
		if again := p.Get(c.n); &again[:1][0] != &b[:1][0] {
			t.Fatalf("Get(%d) after Put did not reuse the buffer", c.n)
		}
	}
	if b := p.Get(1<<20 + 1); b != nil {
		t.Fatalf("Get above the largest class returned %d bytes of capacity", cap(b))
	}
	p.Put(make([]byte, 3000)) // not a class size: dropped
	if b := p.Get(3000); cap(b) != 4<<10 {
		t.Fatalf("Get(3000) cap %d", cap(b))
	}
}

// TestWireFramePoolBounded: a class keeps at most poolClassBudget bytes (at least 2 buffers).
func TestWireFramePoolBounded(t *testing.T) {
	p := NewFramePool()
	for i := 0; i < 10; i++ {
		p.Put(make([]byte, 0, 1<<20))
	}
	if n := len(p.classes[poolClass(1<<20)]); n != 2 {
		t.Fatalf("1 MiB class holds %d buffers", n)
	}
	for i := 0; i < 5000; i++ {
		p.Put(make([]byte, 0, 1<<10))
	}
	if n := len(p.classes[0]); n*(1<<10) != poolClassBudget {
		t.Fatalf("1 KiB class holds %d buffers", n)
	}
}

func TestWireReadFramePooled(t *testing.T) {
	p := NewFramePool()
	var in bytes.Buffer
	frame := func(key int16, n int) {
		in.Write(binary.BigEndian.AppendUint32(nil, uint32(n)))
		body := bytes.Repeat([]byte{byte(n)}, n)
		if n >= 2 {
			binary.BigEndian.PutUint16(body, uint16(key))
		}
		in.Write(body)
	}
	frame(0, 5)
	frame(0, 3000)
	frame(0, 2<<20)
	frame(3, 3000) // not pooled: exact size
	frame(0, 1)    // too short for a key: exact size
	r := bufio.NewReaderSize(&in, 16)
	pooled := func(key int16) bool { return key == 0 }
	for _, c := range []struct{ n, capacity int }{{5, 1 << 10}, {3000, 4 << 10}, {2 << 20, 2 << 20}, {3000, 3000}, {1, 1}} {
		f, err := ReadFramePooled(r, 0, p, pooled)
		if err != nil || len(f) != c.n || cap(f) != c.capacity || f[c.n-1] != byte(c.n) {
			t.Fatalf("frame of %d: len %d cap %d (want %d), %v", c.n, len(f), cap(f), c.capacity, err)
		}
	}
	in.Write([]byte{0xff, 0xff, 0xff, 0xff})
	if _, err := ReadFramePooled(r, 0, p, pooled); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("negative size: %v", err)
	}
	in.Write([]byte{0, 0, 0, 9, 0})
	if _, err := ReadFramePooled(r, 0, p, pooled); err == nil {
		t.Fatal("torn frame accepted")
	}
}
