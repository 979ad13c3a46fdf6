package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"samsa/internal/testwait"
	"samsa/kafka"
)

// TestControllerAlterIsr follows reference §2.4: "the broker epoch matches exactly (else
// STALE_BROKER_EPOCH), and the leader epoch is not older (FENCED_LEADER_EPOCH). It returns
// the current state if nothing changed. It writes ZK fenced, maps BADVERSION to
// INVALID_UPDATE_VERSION, and sends UpdateMetadata to all brokers."
func TestControllerAlterIsr(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	zc := cl.zk()
	cl.registerBroker(zc, 2, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	createTopic(t, zc, "ai", map[int32][]int32{0: {1, 2}})
	wantState(t, zc, "ai", 0, 1, []int32{1, 2}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var epoch int64
	if err := n1.c.sync(ctx, func() { epoch = n1.c.cc.liveBrokers[1].Epoch }); err != nil {
		t.Fatal(err)
	}
	tp := kafka.TopicPartition{Topic: "ai", Partition: 0}
	if _, err := n1.c.AlterIsr(ctx, 1, epoch-1, map[kafka.TopicPartition]IsrChange{tp: {Isr: []int32{1}}}); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	res, err := n1.c.AlterIsr(ctx, 1, epoch, map[kafka.TopicPartition]IsrChange{
		tp:                            {LeaderEpoch: 0, Isr: []int32{1}, ZkVersion: 0},
		{Topic: "nope", Partition: 0}: {Isr: []int32{1}},
		{Topic: "ai", Partition: 7}:   {Isr: []int32{1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[tp]; r.Err != nil || r.State.ZkVersion != 1 || !slices.Equal(r.State.Isr, []int32{1}) {
		t.Fatalf("shrink: %+v", r)
	}
	if !errors.Is(res[kafka.TopicPartition{Topic: "nope", Partition: 0}].Err, ErrUnknownTopicOrPartition) || !errors.Is(res[kafka.TopicPartition{Topic: "ai", Partition: 7}].Err, ErrUnknownTopicOrPartition) {
		t.Fatalf("unknown: %+v", res)
	}
	wantState(t, zc, "ai", 0, 1, []int32{1}, 0)
	testwait.For(t, waitTimeout, func() error {
		got, _ := updateMetadataFor(cl.rec, 2, "ai", 0)
		if len(got) == 0 || !slices.Equal(got[len(got)-1].ISR, []int32{1}) || got[len(got)-1].ZKVersion != 1 {
			return fmt.Errorf("UpdateMetadata %+v", got)
		}
		return nil
	})
	// Repeating the request returns the current state; a stale version or epoch fails.
	res, err = n1.c.AlterIsr(ctx, 1, epoch, map[kafka.TopicPartition]IsrChange{tp: {LeaderEpoch: 0, Isr: []int32{1}, ZkVersion: 0}})
	if err != nil || res[tp].Err != nil || res[tp].State.ZkVersion != 1 {
		t.Fatalf("repeat: %+v %v", res, err)
	}
	res, err = n1.c.AlterIsr(ctx, 1, epoch, map[kafka.TopicPartition]IsrChange{tp: {LeaderEpoch: 0, Isr: []int32{1, 2}, ZkVersion: 0}})
	if err != nil || !errors.Is(res[tp].Err, ErrInvalidUpdateVersion) {
		t.Fatalf("stale version: %+v %v", res, err)
	}
	res, err = n1.c.AlterIsr(ctx, 1, epoch, map[kafka.TopicPartition]IsrChange{tp: {LeaderEpoch: -1, Isr: []int32{1, 2}, ZkVersion: 1}})
	if err != nil || !errors.Is(res[tp].Err, ErrFencedLeaderEpoch) {
		t.Fatalf("fenced epoch: %+v %v", res, err)
	}
	res, err = n1.c.AlterIsr(ctx, 1, epoch, map[kafka.TopicPartition]IsrChange{tp: {LeaderEpoch: 0, Isr: []int32{1, 2}, ZkVersion: 1}})
	if err != nil || res[tp].Err != nil || res[tp].State.ZkVersion != 2 {
		t.Fatalf("expand: %+v %v", res, err)
	}
	wantState(t, zc, "ai", 0, 1, []int32{1, 2}, 0)
}
