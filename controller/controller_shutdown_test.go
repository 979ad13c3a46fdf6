package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// TestControllerControlledShutdown follows reference §3.11: "the ones it leads → Online with
// the ControlledShutdown strategy; for the ones it follows → StopReplica (delete=false) and
// OfflineReplica (removed from the ISR). Reply with the partitions it still leads."
func TestControllerControlledShutdown(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	n3 := cl.startNode(3, nil)
	z2, admin := cl.zk(), cl.zk()
	reg := zkutil.BrokerRegistration{ID: 2, Version: 4, JMXPort: -1,
		Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: brokerPort(2)}}}
	epoch2, err := z2.RegisterBroker(reg)
	if err != nil {
		t.Fatal(err)
	}
	// Both must be live when the topic arrives (see TestControllerBouncedBroker).
	waitBrokerKnown(t, cl, 2)
	waitBrokerKnown(t, cl, 3)
	createTopic(t, admin, "cs", map[int32][]int32{0: {2, 3}, 1: {3, 2}, 2: {2}, 3: {2, 4}})
	wantState(t, admin, "cs", 0, 2, []int32{2, 3}, 0)
	wantState(t, admin, "cs", 1, 3, []int32{3, 2}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	if _, err := n3.c.ControlledShutdown(ctx, 2, epoch2); !errors.Is(err, ErrNotController) {
		t.Fatalf("non-controller: %v", err)
	}
	if _, err := n1.c.ControlledShutdown(ctx, 9, -1); !errors.Is(err, ErrBrokerNotAvailable) {
		t.Fatalf("unknown broker: %v", err)
	}
	if _, err := n1.c.ControlledShutdown(ctx, 2, epoch2-1); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	remaining, err := n1.c.ControlledShutdown(ctx, 2, epoch2)
	if err != nil {
		t.Fatal(err)
	}
	// cs-3's other replica (broker 4) never started, so no leader can take over; cs-2 has a
	// single replica and is not counted ("partitions with RF > 1").
	if want := []kafka.TopicPartition{{Topic: "cs", Partition: 3}}; !slices.Equal(remaining, want) {
		t.Fatalf("remaining %v, want %v", remaining, want)
	}
	wantState(t, admin, "cs", 0, 3, []int32{3}, 1)
	wantState(t, admin, "cs", 1, 3, []int32{3}, 1)
	wantState(t, admin, "cs", 2, 2, []int32{2}, 0)
	testwait.For(t, waitTimeout, func() error {
		got := leaderAndIsrFor(cl.rec, 2, "cs", 0)
		if len(got) == 0 || got[len(got)-1].Leader != 3 {
			return fmt.Errorf("broker 2 was not told it follows cs-0: %+v", got)
		}
		deletes, _ := stopReplicaFor(cl.rec, 2, "cs", 1)
		if len(deletes) == 0 || deletes[0] {
			return fmt.Errorf("broker 2 StopReplica for cs-1: %v", deletes)
		}
		return nil
	})
	// A shutting-down broker does not lead new partitions.
	createTopic(t, admin, "after", map[int32][]int32{0: {2, 3}})
	wantState(t, admin, "after", 0, 3, []int32{3}, 0)

	// Once it is gone and back, it is an ordinary live broker again.
	z2.Close()
	testwait.For(t, waitTimeout, func() error {
		var shutting int
		if err := n1.c.sync(ctx, func() { shutting = len(n1.c.cc.shuttingDown) }); err != nil {
			return err
		}
		if shutting != 0 {
			return fmt.Errorf("%d brokers shutting down", shutting)
		}
		return nil
	})
}
