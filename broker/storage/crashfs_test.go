package storage

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// crashFS runs every operation on the real FS and keeps a model of what a
// power cut would leave of it (pebble's strict MemFS, in spirit): a file's
// bytes survive only up to its last fsync, and a directory's entries
// (creations, renames, removals) only as of its last fsync. After each
// operation it checks every watched path: under each name a crash could
// leave (the directory's durable entry or its live one) and with each
// content the file could then hold (its fsynced bytes or its written
// ones), valid must accept what would be read (nil: the file is missing).
// Violations are collected, with the operation that exposed them.
type crashFS struct {
	FS
	mu      sync.Mutex
	live    map[string]*crashInode // path → file, as the process sees it
	durable map[string]*crashInode // path → file, as a crash would leave it
	watch   map[string]func(content []byte) bool
	ops     int
	bad     []string
}

// crashInode is one file of the model.
type crashInode struct {
	data   []byte // as written
	synced []byte // as of the last fsync; nil: nothing durable
}

func newCrashFS(inner FS) *crashFS {
	return &crashFS{FS: inner, live: map[string]*crashInode{}, durable: map[string]*crashInode{},
		watch: map[string]func([]byte) bool{}}
}

// watchFile starts modelling path: its current content (if any) counts as
// durable, and after every operation valid must accept what a crash
// leaves there.
func (c *crashFS) watchFile(path string, valid func(content []byte) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, err := os.ReadFile(path); err == nil {
		in := &crashInode{data: b, synced: slices.Clone(b)}
		c.live[path], c.durable[path] = in, in
	}
	c.watch[path] = valid
}

// violations returns what the checks found.
func (c *crashFS) violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bad)
}

// checkLocked checks every watched path after operation op.
func (c *crashFS) checkLocked(op string) {
	c.ops++
	for path, valid := range c.watch {
		for _, in := range []*crashInode{c.durable[path], c.live[path]} {
			if in == nil {
				if !valid(nil) {
					c.bad = append(c.bad, fmt.Sprintf("after op %d (%s) a crash leaves %s missing", c.ops, op, path))
				}
				continue
			}
			for _, content := range [][]byte{in.synced, in.data} {
				if content == nil {
					content = []byte{} // present but empty
				}
				if !valid(content) {
					c.bad = append(c.bad, fmt.Sprintf("after op %d (%s) a crash leaves %s holding %q", c.ops, op, path, content))
				}
			}
		}
	}
}

func (c *crashFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	before, rerr := os.ReadFile(name)
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	in := c.live[name]
	if in == nil {
		in = &crashInode{}
		if rerr == nil {
			// An existing file not modelled yet counts as durable.
			in.data, in.synced = before, slices.Clone(before)
			c.durable[name] = in
		}
		c.live[name] = in
	}
	if flag&os.O_TRUNC != 0 {
		in.data = nil
	}
	c.checkLocked("open " + filepath.Base(name))
	return &crashFile{File: f, fs: c, in: in}, nil
}

func (c *crashFS) Rename(oldpath, newpath string) error {
	if err := c.FS.Rename(oldpath, newpath); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live[newpath] = c.live[oldpath]
	delete(c.live, oldpath)
	c.checkLocked("rename " + filepath.Base(oldpath))
	return nil
}

func (c *crashFS) Remove(name string) error {
	if err := c.FS.Remove(name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.live, name)
	c.checkLocked("remove " + filepath.Base(name))
	return nil
}

func (c *crashFS) SyncDir(name string) error {
	if err := c.FS.SyncDir(name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range []map[string]*crashInode{c.live, c.durable} {
		for p := range m {
			if filepath.Dir(p) == filepath.Clean(name) {
				if in := c.live[p]; in != nil {
					c.durable[p] = in
				} else {
					delete(c.durable, p)
				}
			}
		}
	}
	c.checkLocked("syncdir " + filepath.Base(name))
	return nil
}

// crashFile is a file opened through crashFS.
type crashFile struct {
	File
	fs *crashFS
	in *crashInode
}

func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if end := off + int64(n); int64(len(f.in.data)) < end {
		f.in.data = append(f.in.data, make([]byte, end-int64(len(f.in.data)))...)
	}
	copy(f.in.data[off:], p[:n])
	f.fs.checkLocked("write " + filepath.Base(f.Name()))
	return n, err
}

func (f *crashFile) Truncate(size int64) error {
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if int64(len(f.in.data)) > size {
		f.in.data = f.in.data[:size]
	} else {
		f.in.data = append(f.in.data, make([]byte, size-int64(len(f.in.data)))...)
	}
	f.fs.checkLocked("truncate " + filepath.Base(f.Name()))
	return nil
}

func (f *crashFile) Sync() error {
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.in.synced = slices.Clone(f.in.data)
	if f.in.synced == nil {
		f.in.synced = []byte{}
	}
	f.fs.checkLocked("sync " + filepath.Base(f.Name()))
	return nil
}

// oneOf returns a crashFS validity check accepting exactly the given
// contents, and a missing file when missingOK.
func oneOf(missingOK bool, contents ...[]byte) func([]byte) bool {
	return func(b []byte) bool {
		if b == nil {
			return missingOK
		}
		for _, c := range contents {
			if bytes.Equal(b, c) {
				return true
			}
		}
		return false
	}
}
