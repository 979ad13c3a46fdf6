package storage

import (
	"errors"
	"fmt"
	"io"
	"syscall"
)

// FileRegion is a byte range of a segment file holding whole record
// batches. It is what a fetch sends: Log.Read never copies record bytes into
// memory. The region stays valid while the segment file is open; segments
// deleted by retention stay open for file.delete.delay.ms, so a fetch in
// flight can finish.
type FileRegion struct {
	File        File  // the segment's .log
	Pos         int64 // byte position of the first batch
	Len         int64 // bytes; always a sum of whole batches
	FirstOffset int64 // base offset of the first batch
}

// Size returns Len.
func (r FileRegion) Size() int64 { return r.Len }

// copyBufSize is the chunk size of the pread+write fallback.
const copyBufSize = 64 << 10

// WriteTo copies the region to w. When w is a socket (a syscall.Conn, such
// as *net.TCPConn) and the file is an OS file, it uses sendfile(2) with an
// explicit file offset, so concurrent readers of the same file never share
// a file position and the bytes never enter user space. Otherwise it
// falls back to pread + write through a 64 KiB buffer. It returns the bytes
// written; an error if fewer than Len were written.
func (r FileRegion) WriteTo(w io.Writer) (int64, error) {
	if r.Len <= 0 {
		return 0, nil
	}
	if n, handled, err := r.sendfile(w); handled {
		return n, err
	}
	return r.copyTo(w, 0)
}

// copyTo is the portable path, starting done bytes into the region.
func (r FileRegion) copyTo(w io.Writer, done int64) (int64, error) {
	buf := make([]byte, min(int64(copyBufSize), r.Len-done))
	for done < r.Len {
		chunk := buf[:min(int64(len(buf)), r.Len-done)]
		n, err := r.File.ReadAt(chunk, r.Pos+done)
		if n < len(chunk) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return done, fmt.Errorf("storage: read region at %d: %w", r.Pos+done, err)
		}
		m, werr := w.Write(chunk)
		done += int64(m)
		if werr != nil {
			return done, werr
		}
	}
	return done, nil
}

// sendfile tries the zero-copy path. handled is false when w or the file
// cannot do it (nothing was written then).
func (r FileRegion) sendfile(w io.Writer) (n int64, handled bool, err error) {
	dst, ok := w.(syscall.Conn)
	if !ok {
		return 0, false, nil
	}
	src, ok := r.File.(syscall.Conn)
	if !ok {
		return 0, false, nil
	}
	dstRaw, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	srcRaw, err := src.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var (
		written int64
		opErr   error
		unsup   bool
	)
	cerr := srcRaw.Control(func(infd uintptr) {
		werr := dstRaw.Write(func(outfd uintptr) bool {
			for written < r.Len {
				off := r.Pos + written
				m, e := syscall.Sendfile(int(outfd), int(infd), &off, int(min(r.Len-written, 1<<30)))
				if m > 0 {
					written += int64(m)
				}
				switch {
				case e == syscall.EAGAIN:
					return false // wait until the socket is writable
				case e == syscall.EINTR:
					continue
				case e == syscall.EINVAL || e == syscall.ENOSYS || e == syscall.EOPNOTSUPP:
					if written == 0 {
						unsup = true
					} else {
						opErr = e
					}
					return true
				case e != nil:
					opErr = e
					return true
				case m == 0:
					opErr = io.ErrUnexpectedEOF // the file is shorter than the region
					return true
				}
			}
			return true
		})
		if opErr == nil {
			opErr = werr
		}
	})
	if unsup {
		n, err := r.copyTo(w, written)
		return n, true, err
	}
	if cerr != nil && written == 0 && opErr == nil {
		// The file was closed (segment deleted); report it.
		return 0, true, fmt.Errorf("storage: sendfile: %w", cerr)
	}
	if opErr != nil {
		return written, true, fmt.Errorf("storage: sendfile: %w", opErr)
	}
	return written, true, nil
}
