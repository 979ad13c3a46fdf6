package wire

import (
	"bufio"
	"encoding/binary"
	"math/bits"
)

// Frame pool size classes: powers of two from 1 KiB to 16 MiB. Classes up to 1 MiB (the
// producer's default max.request.size, and frameChunk) hand out a new buffer of their size
// when empty; the large classes above it only recycle buffers that grew with the bytes
// received, so a peer that announces a large frame and stalls costs what ReadFrame allows,
// never a class-sized buffer up front. Larger frames are never pooled.
const (
	poolMinShift   = 10
	poolEagerShift = 20
	poolMaxShift   = 24
	// poolClassBudget bounds the bytes one class up to 1 MiB keeps: 2 MiB, at least two
	// buffers. poolLargeBudget bounds a large class: 8 MiB, at least one buffer. A pool holds
	// at most 11 × 2 MiB + 8+8+8+16 MiB, and typically far less (only the classes in use
	// fill, with what the connections returned at once).
	poolClassBudget = 2 << 20
	poolLargeBudget = 8 << 20
)

// FramePool is a bounded free list of request frame buffers by size class, so a connection
// reading many requests does not allocate a fresh buffer for each: a producer's requests are
// often over 1 MiB, and allocating each one (grown chunk by chunk, copying) costs the
// allocation, the copies and the GC cycles they cause (issue 18 point 3, docs/benchmarks.md
// "Cost per partition"). Each class keeps at most its budget; a buffer returned to a full
// class is dropped for the GC. The zero value is not usable; use NewFramePool. Safe for concurrent
// use.
type FramePool struct {
	classes [poolMaxShift - poolMinShift + 1]chan []byte
}

// NewFramePool returns an empty pool.
func NewFramePool() *FramePool {
	p := &FramePool{}
	for i := range p.classes {
		size := 1 << (poolMinShift + i)
		if poolMinShift+i <= poolEagerShift {
			p.classes[i] = make(chan []byte, max(2, poolClassBudget/size))
		} else {
			p.classes[i] = make(chan []byte, max(1, poolLargeBudget/size))
		}
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

// Get returns a buffer of length n from the pool, or, up to 1 MiB, a new one of its class's
// capacity. Above 1 MiB, where a class keeps few buffers and a producer's requests spread over
// several classes, an empty class borrows from the next larger one (the buffer goes back to
// that class on Put). It returns nil when n is beyond the largest class, or above 1 MiB with
// no free buffer (the caller grows one as bytes arrive: ReadFramePooled).
func (p *FramePool) Get(n int) []byte {
	c := poolClass(n)
	if c < 0 {
		return nil
	}
	select {
	case b := <-p.classes[c]:
		return b[:n]
	default:
	}
	if c <= poolEagerShift-poolMinShift {
		return make([]byte, n, 1<<(poolMinShift+c))
	}
	if c+1 < len(p.classes) {
		select {
		case b := <-p.classes[c+1]:
			return b[:n]
		default:
		}
	}
	return nil
}

// Put returns b to the pool. Only buffers whose capacity is exactly a class size (those Get
// made, and those ReadFramePooled grew) are kept; the caller must not use b afterwards.
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
// read); other frames get a buffer of exactly their size. A pooled frame above 1 MiB with no
// free buffer of its class grows as ReadFrame's does, to capacities that are class sizes, so
// that it can go back to the pool. The caller returns a pooled frame with pool.Put once
// nothing refers to it (for a parsed Request: once the handler and the response are done with
// Body's byte fields).
func ReadFramePooled(r *bufio.Reader, maxSize int32, pool *FramePool, pooled func(key int16) bool) ([]byte, error) {
	n, err := readFrameSize(r, maxSize)
	if err != nil {
		return nil, err
	}
	var buf []byte
	geometric := false
	if n >= 2 {
		key, err := r.Peek(2)
		if err != nil {
			return nil, shortFrame(err, n)
		}
		if pooled(int16(binary.BigEndian.Uint16(key))) {
			buf = pool.Get(n)
			geometric = poolClass(n) >= 0
		}
	}
	return readFrameBody(r, n, buf, geometric)
}
