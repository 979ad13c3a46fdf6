package zkutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Stat is the znode metadata Samsa uses (ZooKeeper Stat).
type Stat struct {
	// Czxid is the zxid of the create; for /brokers/ids/<id> it is the
	// broker epoch (KIP-380).
	Czxid int64
	// Mzxid is the zxid of the last data change.
	Mzxid int64
	// Ctime and Mtime are ms since the epoch.
	Ctime int64
	Mtime int64
	// Version is the data version (zkVersion) used by conditional writes.
	Version int32
	// Cversion counts child changes.
	Cversion int32
	// EphemeralOwner is the owning session id, 0 for persistent znodes.
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
}

func toStat(s *zk.Stat) Stat {
	if s == nil {
		return Stat{}
	}
	return Stat{
		Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime, Version: s.Version,
		Cversion: s.Cversion, EphemeralOwner: s.EphemeralOwner, DataLength: s.DataLength, NumChildren: s.NumChildren,
	}
}

// AnyVersion makes a Set, Delete or Check unconditional.
const AnyVersion int32 = -1

// CreateMode selects the kind of znode Create makes.
type CreateMode int32

// Create modes (ZooKeeper CreateMode).
const (
	Persistent           CreateMode = zk.FlagPersistent
	Ephemeral            CreateMode = zk.FlagEphemeral
	PersistentSequential CreateMode = zk.FlagSequence
	EphemeralSequential  CreateMode = zk.FlagEphemeralSequential
)

func (c *Client) checkPath(p string) error {
	if err := validatePath(p); err != nil {
		return fmt.Errorf("%w: %q", ErrInvalidPath, p)
	}
	return c.closedErr()
}

// Get returns the data and stat of path. Errors: ErrNoNode, ErrConnectionLoss,
// ErrSessionExpired, ErrClosed.
func (c *Client) Get(path string) ([]byte, Stat, error) {
	if err := c.checkPath(path); err != nil {
		return nil, Stat{}, err
	}
	var data []byte
	var st *zk.Stat
	err := c.retry(func() (err error) {
		data, st, err = c.conn.Get(c.abs(path))
		return err
	})
	if err != nil {
		return nil, Stat{}, translate(err, "get", path)
	}
	return data, toStat(st), nil
}

// GetW is Get plus a one-shot watch: fn runs on the dispatcher once, when the
// znode's data changes or it is deleted, or when the watch is lost with the
// session, in ZooKeeper's order with every other watch. Use WatchData for a
// persistent watch.
func (c *Client) GetW(path string, fn func()) ([]byte, Stat, error) {
	if err := c.checkPath(path); err != nil {
		return nil, Stat{}, err
	}
	// Registered before the read: its event may follow the answer at once.
	w := &watch{key: watchKey{path: c.abs(path), kind: watchOnce}, path: path, fn: fn}
	c.dispatch.add(w)
	var data []byte
	var st *zk.Stat
	c.sniff.watchesUsed.Store(true)
	err := c.retry(func() (err error) {
		data, st, _, err = c.conn.GetW(c.abs(path))
		return err
	})
	if err != nil {
		c.dispatch.remove(w)
		return nil, Stat{}, translate(err, "get", path)
	}
	return data, toStat(st), nil
}

// Set writes data if the znode's version equals version (AnyVersion: always)
// and returns the new stat. Errors: ErrNoNode, ErrBadVersion, connection errors.
func (c *Client) Set(path string, data []byte, version int32) (Stat, error) {
	if err := c.checkPath(path); err != nil {
		return Stat{}, err
	}
	var st *zk.Stat
	err := c.retry(func() (err error) {
		st, err = c.conn.Set(c.abs(path), data, version)
		return err
	})
	if err != nil {
		return Stat{}, translate(err, "set", path)
	}
	return toStat(st), nil
}

// Create makes a znode and returns its path (chroot-relative; with the
// sequence suffix for sequential modes). The parent must exist. Errors:
// ErrNodeExists, ErrNoNode (missing parent), connection errors.
func (c *Client) Create(path string, data []byte, mode CreateMode) (string, error) {
	if err := c.checkPath(path); err != nil {
		return "", err
	}
	var created string
	err := c.retry(func() (err error) {
		created, err = c.conn.Create(c.abs(path), data, int32(mode), c.aclFor(path))
		return err
	})
	if err != nil {
		return "", translate(err, "create", path)
	}
	return c.rel(created), nil
}

// CreateRecursive is Create that first creates missing parents as empty
// persistent znodes (Kafka createRecursive).
func (c *Client) CreateRecursive(path string, data []byte, mode CreateMode) (string, error) {
	created, err := c.Create(path, data, mode)
	if !errors.Is(err, ErrNoNode) {
		return created, err
	}
	if err := c.EnsurePath(parentOf(path)); err != nil {
		return "", err
	}
	return c.Create(path, data, mode)
}

// EnsurePath creates path and its missing ancestors as empty persistent
// znodes; existing znodes are left alone.
func (c *Client) EnsurePath(path string) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	if path == "/" {
		return nil
	}
	segs := strings.Split(path[1:], "/")
	cur := ""
	for _, s := range segs {
		cur += "/" + s
		exists, _, err := c.Exists(cur)
		if err != nil {
			return err
		}
		if exists {
			continue
		}
		if _, err := c.Create(cur, nil, Persistent); err != nil && !errors.Is(err, ErrNodeExists) {
			return err
		}
	}
	return nil
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// Delete removes path if its version equals version (AnyVersion: always).
// Errors: ErrNoNode, ErrBadVersion, ErrNotEmpty, connection errors.
func (c *Client) Delete(path string, version int32) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	err := c.retry(func() error { return c.conn.Delete(c.abs(path), version) })
	return translate(err, "delete", path)
}

// DeleteRecursive removes path and everything below it, unconditionally. A
// missing path is not an error. If children keep appearing while it deletes,
// it gives up after a few passes with ErrNotEmpty.
func (c *Client) DeleteRecursive(path string) error {
	var err error
	for pass := 0; pass < 5; pass++ {
		if err = c.deleteTree(path); !errors.Is(err, ErrNotEmpty) {
			return err
		}
	}
	return err
}

// deleteTree makes one depth-first pass; ErrNotEmpty means a child appeared.
func (c *Client) deleteTree(path string) error {
	children, err := c.Children(path)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ch := range children {
		if err := c.deleteTree(path + "/" + ch); err != nil {
			return err
		}
	}
	err = c.Delete(path, AnyVersion)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	return err
}

// Children returns the child names of path, unsorted. Errors: ErrNoNode and
// connection errors.
func (c *Client) Children(path string) ([]string, error) {
	if err := c.checkPath(path); err != nil {
		return nil, err
	}
	var children []string
	err := c.retry(func() (err error) {
		children, _, err = c.conn.Children(c.abs(path))
		return err
	})
	if err != nil {
		return nil, translate(err, "children", path)
	}
	return children, nil
}

// Exists reports whether path exists and its stat.
func (c *Client) Exists(path string) (bool, Stat, error) {
	if err := c.checkPath(path); err != nil {
		return false, Stat{}, err
	}
	var ok bool
	var st *zk.Stat
	err := c.retry(func() (err error) {
		ok, st, err = c.conn.Exists(c.abs(path))
		return err
	})
	if err != nil {
		return false, Stat{}, translate(err, "exists", path)
	}
	if !ok {
		return false, Stat{}, nil
	}
	return true, toStat(st), nil
}
