package wire

import (
	"bufio"
	"encoding/binary"
	"math/bits"
)

// Frame pool size classes: powers of two from 1 KiB to 1 MiB (the producer's default
// max.request.size). Larger frames are never pooled.
const (
	poolMinShift = 10
	poolMaxShift = 20
	// poolClassBudget bounds the bytes one size class keeps: 2 MiB, so a pool holds at most
	// 11 × 2 MiB and typically far less (only the classes in use fill).
	poolClassBudget = 2 << 20
)

// FramePool is a bounded free list of request frame buffers by size class, so a connection
// reading many small requests does not allocate a fresh buffer for each. Each class keeps at
// most poolClassBudget bytes; a buffer returned to a full class is dropped for the GC. The
// zero value is not usable; use NewFramePool. Safe for concurrent use.
type FramePool struct {
	classes [poolMaxShift - poolMinShift + 1]chan []byte
}

// NewFramePool returns an empty pool.
func NewFramePool() *FramePool {
	p := &FramePool{}
	for i := range p.classes {
		size := 1 << (poolMinShift + i)
		p.classes[i] = make(chan []byte, max(2, poolClassBudget/size))
	}
	return p
}

// class returns the index of the smallest class holding n bytes, or -1 when n is too large.
func poolClass(n int) int {
	if n <= 1<<poolMinShift {
		return 0
	}
	shift := bits.Len(uint(n - 1))
	if shift > poolMaxShift {
		return -1
	}
	return shift - poolMinShift
}

// Get returns a buffer of length n from the pool (or a new one of its class's capacity), or
// nil when n is beyond the largest class.
func (p *FramePool) Get(n int) []byte {
	c := poolClass(n)
	if c < 0 {
		return nil
	}
	select {
	case b := <-p.classes[c]:
		return b[:n]
	default:
		return make([]byte, n, 1<<(poolMinShift+c))
	}
}

// Put returns b to the pool. Only buffers whose capacity is exactly a class size (those Get
// made) are kept; the caller must not use b afterwards.
func (p *FramePool) Put(b []byte) {
	c := poolClass(cap(b))
	if c < 0 || cap(b) != 1<<(poolMinShift+c) {
		return
	}
	select {
	case p.classes[c] <- b[:0]:
	default: // class full: leave b to the GC
	}
}

// ReadFramePooled is ReadFrame with the frame body taken from pool when pooled(api key) says
// the caller will return it (the key is the body's first two bytes, peeked before the body is
// read); other frames get a buffer of exactly their size. The caller returns a pooled frame
// with pool.Put once nothing refers to it (for a parsed Request: once the handler and the
// response are done with Body's byte fields).
func ReadFramePooled(r *bufio.Reader, maxSize int32, pool *FramePool, pooled func(key int16) bool) ([]byte, error) {
	n, err := readFrameSize(r, maxSize)
	if err != nil {
		return nil, err
	}
	var buf []byte
	if n >= 2 {
		key, err := r.Peek(2)
		if err != nil {
			return nil, shortFrame(err, n)
		}
		if pooled(int16(binary.BigEndian.Uint16(key))) {
			buf = pool.Get(n)
		}
	}
	return readFrameBody(r, n, buf)
}
