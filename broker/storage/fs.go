package storage

import (
	"io"
	"io/fs"
	"os"
)

// File is the subset of *os.File that storage uses. Implementations must allow
// concurrent ReadAt calls with one writer (pread/pwrite semantics).
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes the file's written data and size durable (fsync).
	Sync() error
	// Truncate changes the file size; growing fills with zeros.
	Truncate(size int64) error
	// Stat returns the file's size and modification time.
	Stat() (fs.FileInfo, error)
	// Name returns the path the file was opened with.
	Name() string
}

// FS is every file-system operation storage performs, so tests can inject
// faults (S7.3). Production uses OSFS.
type FS interface {
	// OpenFile opens name with os.OpenFile flags.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Rename atomically renames oldpath to newpath (rename(2)).
	Rename(oldpath, newpath string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes a directory tree.
	RemoveAll(name string) error
	// ReadDir lists a directory sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// MkdirAll creates a directory and its parents.
	MkdirAll(name string, perm fs.FileMode) error
	// SyncDir fsyncs a directory so that creations, renames and removals of
	// its entries are durable.
	SyncDir(name string) error
	// Stat returns information about name.
	Stat(name string) (fs.FileInfo, error)
}

// OSFS is the FS backed by the operating system. Its files are *os.File, so
// FileRegion.WriteTo can use sendfile(2) on them.
type OSFS struct{}

var _ FS = OSFS{}

// OpenFile implements FS.
func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// RemoveAll implements FS.
func (OSFS) RemoveAll(name string) error { return os.RemoveAll(name) }

// ReadDir implements FS.
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }

// Stat implements FS.
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// SyncDir implements FS. Durable: the directory entries (file creations,
// renames and removals inside name).
func (OSFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}
