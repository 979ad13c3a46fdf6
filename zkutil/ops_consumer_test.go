package zkutil_test

import (
	"errors"
	"testing"

	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

func TestZKOldConsumerNodes(t *testing.T) {
	srv := zktest.Start(t)
	cs := srv.Chroot(t)
	a, b := connect(t, cs), connect(t, cs)
	reg := zkutil.ConsumerRegistration{Subscription: map[string]int32{"t": 1}, Pattern: "static", Timestamp: 1}
	mustf(t, a.RegisterConsumer("g", "g_a-1", reg), "register")
	mustf(t, a.RegisterConsumer("g", "g_a-1", reg), "re-register")
	if err := b.RegisterConsumer("g", "g_a-1", reg); !errors.Is(err, zkutil.ErrNodeExists) {
		t.Fatalf("foreign register: %v", err)
	}
	ids, err := b.GetConsumerIDs("g")
	mustf(t, err, "ids")
	if len(ids) != 1 || ids[0] != "g_a-1" {
		t.Fatalf("ids %v", ids)
	}
	mustf(t, a.ClaimPartition("g", "t", 0, "g_a-1-0"), "claim")
	if err := b.ClaimPartition("g", "t", 0, "g_b-1-0"); !errors.Is(err, zkutil.ErrNodeExists) {
		t.Fatalf("claim held: %v", err)
	}
	owner, err := b.GetPartitionOwner("g", "t", 0)
	mustf(t, err, "owner")
	if owner != "g_a-1-0" {
		t.Fatalf("owner %q", owner)
	}
	mustf(t, b.ReleasePartition("g", "t", 0), "foreign release is a no-op")
	mustf(t, a.ReleasePartition("g", "t", 0), "release")
	mustf(t, b.ClaimPartition("g", "t", 0, "g_b-1-0"), "claim after release")

	if _, err := a.GetConsumerOffset("g", "t", 0); !errors.Is(err, zkutil.ErrNoNode) {
		t.Fatalf("missing offset: %v", err)
	}
	mustf(t, a.SetConsumerOffset("g", "t", 0, 42), "set offset")
	mustf(t, a.SetConsumerOffset("g", "t", 0, 43), "set offset again")
	off, err := b.GetConsumerOffset("g", "t", 0)
	mustf(t, err, "get offset")
	if off != 43 {
		t.Fatalf("offset %d", off)
	}
	offs, err := b.GetConsumerOffsets("g", "t")
	mustf(t, err, "offsets")
	if len(offs) != 1 || offs[0] != 43 {
		t.Fatalf("offsets %v", offs)
	}
	groups, err := b.GetConsumerGroups()
	mustf(t, err, "groups")
	if len(groups) != 1 || groups[0] != "g" {
		t.Fatalf("groups %v", groups)
	}
}
