package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
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
	// Above 1 MiB a class only recycles: nothing up front, a returned buffer reused.
	if b := p.Get(1<<20 + 1); b != nil {
		t.Fatalf("Get above 1 MiB with an empty class returned %d bytes of capacity", cap(b))
	}
	big := make([]byte, 0, 4<<20)
	p.Put(big)
	if b := p.Get(3 << 20); len(b) != 3<<20 || &b[0] != &big[:1][0] {
		t.Fatalf("Get(3 MiB) after a 4 MiB Put: len %d cap %d", len(b), cap(b))
	}
	// An empty large class borrows from the next larger one only.
	p.Put(make([]byte, 0, 8<<20))
	if b := p.Get(2 << 20); b != nil {
		t.Fatalf("Get(2 MiB) took a %d-byte buffer from two classes up", cap(b))
	}
	if b := p.Get(3 << 20); cap(b) != 8<<20 {
		t.Fatalf("Get(3 MiB) with an empty 4 MiB class: cap %d, want the 8 MiB buffer", cap(b))
	}
	p.Put(make([]byte, 0, 32<<20)) // beyond the largest class: dropped
	if b := p.Get(17 << 20); b != nil {
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
	// The large classes: poolLargeBudget bytes, at least one buffer.
	for _, c := range []struct{ size, want int }{{2 << 20, 4}, {8 << 20, 1}, {16 << 20, 1}} {
		for i := 0; i < 10; i++ {
			p.Put(make([]byte, 0, c.size))
		}
		if n := len(p.classes[poolClass(c.size)]); n != c.want {
			t.Fatalf("%d MiB class holds %d buffers, want %d", c.size>>20, n, c.want)
		}
	}
}

// TestWireReadFramePooledLarge: a pooled frame above 1 MiB grows as bytes arrive to a class
// size (so it can go back to the pool), and once returned the next frame of its class is read
// into it without allocating.
func TestWireReadFramePooledLarge(t *testing.T) {
	p := NewFramePool()
	body := make([]byte, 3<<20+5)
	for i := range body {
		body[i] = byte(i * 31)
	}
	binary.BigEndian.PutUint16(body, 0)
	var in bytes.Buffer
	for range 2 {
		in.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body))))
		in.Write(body)
	}
	r := bufio.NewReaderSize(&in, 16<<10)
	pooled := func(int16) bool { return true }
	f, err := ReadFramePooled(r, 0, p, pooled)
	if err != nil || !bytes.Equal(f, body) || cap(f) != 4<<20 {
		t.Fatalf("first frame: err %v, equal %v, cap %d", err, bytes.Equal(f, body), cap(f))
	}
	first := &f[0]
	p.Put(f)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err = ReadFramePooled(r, 0, p, pooled)
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(f, body) || &f[0] != first {
		t.Fatalf("second frame: err %v, equal %v, reused %v", err, bytes.Equal(f, body), &f[0] == first)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
		t.Fatalf("second frame allocated %d bytes", d)
	}
	// A stalled large frame costs no more than what ReadFrame allows.
	in.Reset()
	in.Write(binary.BigEndian.AppendUint32(nil, 12<<20))
	in.Write(make([]byte, 1000))
	runtime.ReadMemStats(&before)
	if _, err := ReadFramePooled(bufio.NewReader(&in), 0, p, pooled); err == nil {
		t.Fatal("torn frame accepted")
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 2*frameChunk {
		t.Fatalf("a stalled 12 MiB frame allocated %d bytes after 1000 arrived", d)
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
