package zkutil_test

import (
	"errors"
	"strings"
	"testing"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKChrootCreated(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	c := connect(t, cs)
	if _, err := c.Create("/a", []byte("x"), zkutil.Persistent); err != nil {
		t.Fatal(err)
	}
	// A chroot-less client sees the node under the chroot path.
	root := connect(t, srv.Addr)
	chroot := cs[strings.IndexByte(cs, '/'):]
	data, _, err := root.Get(chroot + "/a")
	mustf(t, err, "get through root client")
	if string(data) != "x" {
		t.Fatalf("data = %q", data)
	}
	// Sequential names come back chroot-relative.
	p, err := c.Create("/a/seq_", nil, zkutil.PersistentSequential)
	mustf(t, err, "create sequential")
	if !strings.HasPrefix(p, "/a/seq_") || len(p) != len("/a/seq_")+10 {
		t.Fatalf("sequential path %q", p)
	}
}

func TestZKRawErrors(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	if _, _, err := c.Get("/missing"); !errors.Is(err, zkutil.ErrNoNode) {
		t.Fatalf("get missing: %v", err)
	}
	mustf(t, c.EnsurePath("/x/y"), "ensure")
	if _, err := c.Create("/x/y", nil, zkutil.Persistent); !errors.Is(err, zkutil.ErrNodeExists) {
		t.Fatalf("create existing: %v", err)
	}
	if _, err := c.Set("/x/y", []byte("1"), 5); !errors.Is(err, zkutil.ErrBadVersion) {
		t.Fatalf("set bad version: %v", err)
	}
	if err := c.Delete("/x", zkutil.AnyVersion); !errors.Is(err, zkutil.ErrNotEmpty) {
		t.Fatalf("delete non-empty: %v", err)
	}
	if _, err := c.CreateRecursive("/p/q/r", []byte("d"), zkutil.Persistent); err != nil {
		t.Fatal(err)
	}
	mustf(t, c.DeleteRecursive("/p"), "delete recursive")
	if ok, _, _ := c.Exists("/p"); ok {
		t.Fatal("/p still exists")
	}
	// Multi: the failing op is named and nothing is applied.
	_, err := c.Multi(zkutil.CreateOp{Path: "/m1"}, zkutil.CheckOp{Path: "/x/y", Version: 42})
	var me *zkutil.MultiError
	if !errors.As(err, &me) || me.Index != 1 || !errors.Is(err, zkutil.ErrBadVersion) {
		t.Fatalf("multi error = %v", err)
	}
	if ok, _, _ := c.Exists("/m1"); ok {
		t.Fatal("failed multi applied its create")
	}
	c.Close()
	if _, _, err := c.Get("/x"); !errors.Is(err, zkutil.ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
}
