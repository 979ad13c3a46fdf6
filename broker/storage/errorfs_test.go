package storage

import (
	"errors"
	"io/fs"
	"sync"
)

// errInjected is the error errorFS returns for an injected failure.
var errInjected = errors.New("injected disk error")

// faultOp is a kind of operation errorFS can fail.
type faultOp int

const (
	opWrite faultOp = iota
	opSync
	opRename
	numFaultOps
)

// errorFS wraps an FS and fails the (N+1)th and later operations of a
// kind once armed (pebble's errorfs, test code only: S7.3). A failed write
// first writes half its bytes, like a torn write.
type errorFS struct {
	FS
	mu     sync.Mutex
	counts [numFaultOps]int
	after  [numFaultOps]int // -1: never fail
}

func newErrorFS(inner FS) *errorFS {
	e := &errorFS{FS: inner}
	for i := range e.after {
		e.after[i] = -1
	}
	return e
}

// failAfter arms op to fail after n more successful calls.
func (e *errorFS) failAfter(op faultOp, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts[op] = 0
	e.after[op] = n
}

// heal disarms every fault.
func (e *errorFS) heal() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.after {
		e.after[i] = -1
	}
}

func (e *errorFS) fail(op faultOp) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts[op]++
	return e.after[op] >= 0 && e.counts[op] > e.after[op]
}

func (e *errorFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := e.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

func (e *errorFS) Rename(oldpath, newpath string) error {
	if e.fail(opRename) {
		return errInjected
	}
	return e.FS.Rename(oldpath, newpath)
}

func (e *errorFS) SyncDir(name string) error {
	if e.fail(opSync) {
		return errInjected
	}
	return e.FS.SyncDir(name)
}

type errorFile struct {
	File
	fs *errorFS
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if f.fs.fail(opWrite) {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, errInjected
	}
	return f.File.WriteAt(p, off)
}

func (f *errorFile) Sync() error {
	if f.fs.fail(opSync) {
		return errInjected
	}
	return f.File.Sync()
}
