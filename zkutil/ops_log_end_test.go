package zkutil_test

import (
	"slices"
	"testing"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// TestZKLogEndEntries: the entries round-trip through
// /config/samsa_log_end_replicas/<topic>, are stored in the entity config
// JSON under "replicas", and each write announces itself under
// /config/changes.
func TestZKLogEndEntries(t *testing.T) {
	srv := zktest.Start(t)
	c := connect(t, srv.Chroot(t))
	mustf(t, c.CreatePersistentPaths(), "persistent paths")
	got, err := c.GetLogEndEntries("t")
	mustf(t, err, "missing entries")
	if len(got) != 0 {
		t.Fatalf("missing entries = %v", got)
	}
	want := []zkutil.LogEndEntry{{Partition: 0, Replica: 3}, {Partition: 1, Replica: 3}}
	mustf(t, c.SetLogEndEntries("t", want), "set")
	got, err = c.GetLogEndEntries("t")
	mustf(t, err, "get")
	if !slices.Equal(got, want) {
		t.Fatalf("entries = %v, want %v", got, want)
	}
	cfg, err := c.GetEntityConfig(zkutil.ConfigTypeLogEndReplicas, "t")
	mustf(t, err, "raw config")
	if cfg["replicas"] != "0:3,1:3" {
		t.Fatalf("stored config = %v", cfg)
	}
	changes, err := c.GetConfigChanges()
	mustf(t, err, "changes")
	if len(changes) != 1 {
		t.Fatalf("changes = %v", changes)
	}
	if p, _, err := c.ReadConfigChange(changes[0]); err != nil || p != "samsa_log_end_replicas/t" {
		t.Fatalf("change = %q %v", p, err)
	}
}

// FuzzZKLogEndEntries: the "p:b,p:b" lists read from ZooKeeper never panic
// and format back to themselves.
func FuzzZKLogEndEntries(f *testing.F) {
	for _, s := range []string{"0:1,1:2", "*", "", ",,", "a:b", "1:-2", "99999999999:1", " 3 : 4 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries := zkutil.DecodeLogEndEntries(s)
		if again := zkutil.DecodeLogEndEntries(zkutil.EncodeLogEndEntries(entries)); !slices.Equal(again, entries) {
			t.Fatalf("%q: %v then %v", s, entries, again)
		}
	})
}
