package zkutil

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Op is one operation of a Multi: CreateOp, SetOp, DeleteOp or CheckOp.
type Op interface {
	zkOp(c *Client) any
	opPath() string
}

// CreateOp creates Path with Data in Mode.
type CreateOp struct {
	Path string
	Data []byte
	Mode CreateMode
}

// SetOp sets Path's data if its version is Version (AnyVersion: always).
type SetOp struct {
	Path    string
	Data    []byte
	Version int32
}

// DeleteOp deletes Path if its version is Version (AnyVersion: always).
type DeleteOp struct {
	Path    string
	Version int32
}

// CheckOp fails the Multi unless Path's version is Version.
type CheckOp struct {
	Path    string
	Version int32
}

func (o CreateOp) zkOp(c *Client) any {
	return &zk.CreateRequest{Path: c.abs(o.Path), Data: o.Data, Acl: c.aclFor(o.Path), Flags: int32(o.Mode)}
}
func (o SetOp) zkOp(c *Client) any {
	return &zk.SetDataRequest{Path: c.abs(o.Path), Data: o.Data, Version: o.Version}
}
func (o DeleteOp) zkOp(c *Client) any {
	return &zk.DeleteRequest{Path: c.abs(o.Path), Version: o.Version}
}
func (o CheckOp) zkOp(c *Client) any {
	return &zk.CheckVersionRequest{Path: c.abs(o.Path), Version: o.Version}
}
func (o CreateOp) opPath() string { return o.Path }
func (o SetOp) opPath() string    { return o.Path }
func (o DeleteOp) opPath() string { return o.Path }
func (o CheckOp) opPath() string  { return o.Path }

// OpResult is the outcome of one operation of a Multi.
type OpResult struct {
	// Path is the created path for a CreateOp (chroot-relative).
	Path string
	// Stat is the new stat for a SetOp.
	Stat Stat
	// Err is the operation's translated error; on a failed Multi the
	// operations that did not cause the failure report nil or a
	// "rolled back" error.
	Err error
}

// MultiError is returned by Multi when the transaction failed. It wraps the
// error of the first failing operation, so errors.Is(err, ErrBadVersion) and
// friends work.
type MultiError struct {
	// Index is the position of the first failing operation.
	Index int
	// Err is that operation's translated error.
	Err error
}

// Error names the failing operation and its error.
func (e *MultiError) Error() string { return fmt.Sprintf("zkutil: multi op %d: %v", e.Index, e.Err) }

// Unwrap returns the failing operation's error.
func (e *MultiError) Unwrap() error { return e.Err }

// Multi runs ops atomically: all succeed or none. On failure it returns the
// per-op results and a *MultiError naming the first failing op.
func (c *Client) Multi(ops ...Op) ([]OpResult, error) {
	if err := c.closedErr(); err != nil {
		return nil, err
	}
	reqs := make([]any, len(ops))
	for i, o := range ops {
		if err := validatePath(o.opPath()); err != nil {
			return nil, fmt.Errorf("%w: multi op %d: %q", ErrInvalidPath, i, o.opPath())
		}
		reqs[i] = o.zkOp(c)
	}
	var res []zk.MultiResponse
	err := c.retry(func() (err error) {
		res, err = c.conn.Multi(reqs...)
		return err
	})
	out := make([]OpResult, len(ops))
	var first *MultiError
	for i := range res {
		if i >= len(out) {
			break
		}
		r := res[i]
		out[i].Stat = toStat(r.Stat)
		if r.String != "" {
			out[i].Path = c.rel(r.String)
		}
		if r.Error != nil {
			out[i].Err = translate(r.Error, "multi", ops[i].opPath())
			if first == nil && !isRolledBack(r.Error) {
				first = &MultiError{Index: i, Err: out[i].Err}
			}
		}
	}
	if first != nil {
		return out, first
	}
	if err != nil {
		if len(ops) > 0 && len(res) == 0 && !retryable(err) && !errors.Is(err, zk.ErrClosing) {
			// The server reported the failure only in the reply header.
			return out, &MultiError{Index: -1, Err: translate(err, "multi", ops[0].opPath())}
		}
		return out, translate(err, "multi", "")
	}
	return out, nil
}

// isRolledBack reports ZooKeeper's RUNTIMEINCONSISTENCY (-2) and OK results
// that a failed multi reports for the operations it rolled back.
func isRolledBack(err error) bool {
	var s = err.Error()
	return s == "unknown error: -2"
}
