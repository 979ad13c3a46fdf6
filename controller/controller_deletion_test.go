package controller

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// stopReplicaFor returns (delete flag, leader epoch) of every StopReplica v3 partition state
// for topic/p recorded for broker.
func stopReplicaFor(rec *recorder, broker int32, topic string, p int32) (deletes []bool, epochs []int32) {
	for _, r := range rec.requests(broker, 5) {
		for _, tpc := range r.(*kmsg.StopReplicaRequest).Topics {
			for _, ps := range tpc.PartitionStates {
				if tpc.Topic == topic && ps.Partition == p {
					deletes = append(deletes, ps.Delete)
					epochs = append(epochs, ps.LeaderEpoch)
				}
			}
		}
	}
	return deletes, epochs
}

// topicGone checks that the topic's znodes, config and marker are all deleted.
func topicGone(zc *zkutil.Client, topic string) error {
	exists, err := zc.TopicExists(topic)
	if err != nil {
		return err
	}
	if exists {
		return fmt.Errorf("topic %s still exists", topic)
	}
	marked, err := zc.GetTopicsMarkedForDeletion()
	if err != nil {
		return err
	}
	for _, m := range marked {
		if m == topic {
			return fmt.Errorf("topic %s still marked for deletion", topic)
		}
	}
	if _, _, err := zc.GetPartitionState(topic, 0); !errors.Is(err, zkutil.ErrNoNode) {
		return fmt.Errorf("partition state of %s: %v", topic, err)
	}
	return nil
}

// TestControllerTopicDeletion follows reference §3.8: UpdateMetadata with leader -2 to all
// brokers, StopReplica delete=false then delete=true (leader epoch -2) to every replica, and
// once all replicas are deleted the topic's znodes and marker are removed.
func TestControllerTopicDeletion(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	zc := cl.zk()
	cl.registerBroker(zc, 2, "")
	cl.registerBroker(zc, 3, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	waitBrokerKnown(t, cl, 3) // live before the topic arrives (see TestControllerBouncedBroker)
	if err := zc.CreateTopic("del", map[int32][]int32{0: {2, 3}, 1: {3, 2}}, map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, zc, "del", 1, 3, []int32{3, 2}, 0)
	if err := zc.MarkTopicForDeletion("del"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error { return topicGone(zc, "del") })
	cfg, err := zc.GetEntityConfig(zkutil.ConfigTypeTopic, "del")
	if err != nil || len(cfg) != 0 {
		t.Fatalf("topic config left: %v %v", cfg, err)
	}
	for _, b := range []int32{2, 3} {
		for _, p := range []int32{0, 1} {
			deletes, epochs := stopReplicaFor(cl.rec, b, "del", p)
			if len(deletes) == 0 || !deletes[len(deletes)-1] || epochs[len(epochs)-1] != epochDuringDelete {
				t.Fatalf("broker %d del-%d StopReplica deletes %v epochs %v", b, p, deletes, epochs)
			}
		}
	}
	for _, b := range []int32{1, 2, 3} {
		got, _ := updateMetadataFor(cl.rec, b, "del", 0)
		found := false
		for _, ps := range got {
			found = found || ps.Leader == LeaderDuringDelete
		}
		if !found {
			t.Fatalf("broker %d got no UpdateMetadata with leader -2: %+v", b, got)
		}
	}
	testwait.For(t, waitTimeout, func() error {
		if v := n1.c.metrics.topics.Load(); v != 0 {
			return fmt.Errorf("GlobalTopicCount %d", v)
		}
		return nil
	})
	// The name can be used again.
	createTopic(t, zc, "del", map[int32][]int32{0: {3}})
	wantState(t, zc, "del", 0, 3, []int32{3}, 0)
}

// TestControllerTopicDeletionWaitsForOfflineReplica: "dead replicas →
// ReplicaDeletionIneligible (the topic becomes ineligible)"; deletion completes once the
// broker is back.
func TestControllerTopicDeletionWaitsForOfflineReplica(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	z2, admin := cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	createTopic(t, admin, "wait", map[int32][]int32{0: {1, 2}})
	wantState(t, admin, "wait", 0, 1, []int32{1, 2}, 0)
	z2.Close()
	wantState(t, admin, "wait", 0, 1, []int32{1}, 1)
	if err := admin.MarkTopicForDeletion("wait"); err != nil {
		t.Fatal(err)
	}
	// The live replica is deleted; the dead one keeps the topic (and its marker) alive.
	testwait.For(t, waitTimeout, func() error {
		var live, dead ReplicaState
		if err := n1.c.sync(t.Context(), func() {
			live = n1.c.cc.replicaStates[PartitionReplica{kafka.TopicPartition{Topic: "wait", Partition: 0}, 1}]
			dead = n1.c.cc.replicaStates[PartitionReplica{kafka.TopicPartition{Topic: "wait", Partition: 0}, 2}]
		}); err != nil {
			return err
		}
		if live != ReplicaDeletionSuccessful || (dead != ReplicaDeletionIneligible && dead != OfflineReplica) {
			return fmt.Errorf("replica 1 %v, replica 2 %v", live, dead)
		}
		return nil
	})
	if exists, _ := admin.TopicExists("wait"); !exists {
		t.Fatal("topic deleted while a replica is offline")
	}
	cl.registerBroker(cl.zk(), 2, "")
	testwait.For(t, waitTimeout, func() error { return topicGone(admin, "wait") })
}

// TestControllerTopicDeletionMarkers: a marker for an unknown topic is removed; with
// delete.topic.enable=false markers are removed and the topic is kept.
func TestControllerTopicDeletionMarkers(t *testing.T) {
	t.Parallel()
	cl, _ := newActiveCluster(t, func(c *Config) { c.DeleteTopicDisabled = true })
	zc := cl.zk()
	createTopic(t, zc, "keep", map[int32][]int32{0: {1}})
	wantState(t, zc, "keep", 0, 1, []int32{1}, 0)
	if err := zc.MarkTopicForDeletion("keep"); err != nil {
		t.Fatal(err)
	}
	if err := zc.MarkTopicForDeletion("nosuch"); err != nil {
		t.Fatal(err)
	}
	waitNoneLeft(t, "markers", zc.GetTopicsMarkedForDeletion)
	if exists, _ := zc.TopicExists("keep"); !exists {
		t.Fatal("topic deleted with delete.topic.enable=false")
	}
}

// TestControllerTopicDeletionRestoresAssignment: partitions added to a topic queued for
// deletion are written back out (Kafka's restorePartitionReplicaAssignment).
func TestControllerTopicDeletionRestoresAssignment(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	z2, admin := cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	createTopic(t, admin, "r", map[int32][]int32{0: {2}})
	wantState(t, admin, "r", 0, 2, []int32{2}, 0)
	z2.Close() // the deletion then waits for broker 2
	if err := admin.MarkTopicForDeletion("r"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		var queued bool
		if err := n1.c.sync(t.Context(), func() { queued = n1.c.cc.isQueuedForDeletion("r") }); err != nil {
			return err
		}
		if !queued {
			return errors.New("not queued")
		}
		return nil
	})
	a, v, err := admin.GetTopicAssignment("r")
	if err != nil {
		t.Fatal(err)
	}
	a.Partitions[1] = []int32{1}
	if _, err := admin.SetTopicAssignment("r", a, v); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		a, _, err := admin.GetTopicAssignment("r")
		if err != nil {
			return err
		}
		if len(a.Partitions) != 1 {
			return fmt.Errorf("assignment %v", a.Partitions)
		}
		return nil
	})
}

// TestControllerTopicDeletionRetriesFailedReplica: a StopReplica error moves the replica to
// ReplicaDeletionIneligible; the deletion is retried on the next trigger and completes.
func TestControllerTopicDeletionRetriesFailedReplica(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	var failed atomic.Bool
	cl.rec.respond = func(broker int32, req kmsg.Request) kmsg.Response {
		sr, ok := req.(*kmsg.StopReplicaRequest)
		if !ok || broker != 2 || failed.Load() || len(sr.Topics) == 0 || !sr.Topics[0].PartitionStates[0].Delete {
			return nil
		}
		failed.Store(true)
		resp := sr.ResponseKind().(*kmsg.StopReplicaResponse)
		p := kmsg.NewStopReplicaResponsePartition()
		p.Topic, p.Partition, p.ErrorCode = sr.Topics[0].Topic, sr.Topics[0].PartitionStates[0].Partition, kerr.KafkaStorageError.Code
		resp.Partitions = append(resp.Partitions, p)
		return resp
	}
	n1 := cl.startNode(1, nil)
	waitActive(t, n1)
	zc := cl.zk()
	cl.registerBroker(zc, 2, "")
	waitBrokerKnown(t, cl, 2) // live before the topic arrives (see TestControllerBouncedBroker)
	createTopic(t, zc, "retry", map[int32][]int32{0: {1, 2}})
	wantState(t, zc, "retry", 0, 1, []int32{1, 2}, 0)
	if err := zc.MarkTopicForDeletion("retry"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		if !failed.Load() {
			return errors.New("no failed StopReplica yet")
		}
		var topics int
		if err := n1.c.sync(t.Context(), func() { topics = len(n1.c.cc.assignments) }); err != nil {
			return err
		}
		if topics != 1 {
			return fmt.Errorf("%d topics", topics)
		}
		return nil
	})
	// Any later deletion event resumes it; a marker for an unknown topic is one.
	if err := zc.MarkTopicForDeletion("other"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error { return topicGone(zc, "retry") })
}

// TestControllerTopicDeletionAtFailover: a topic marked while no controller runs is deleted
// by the next controller ("load topic deletions in progress").
func TestControllerTopicDeletionAtFailover(t *testing.T) {
	t.Parallel()
	cl, n1 := newActiveCluster(t, nil)
	zc := cl.zk()
	createTopic(t, zc, "later", map[int32][]int32{0: {1}})
	wantState(t, zc, "later", 0, 1, []int32{1}, 0)
	n1.c.Shutdown()
	n1.zk.Close()
	if err := zc.MarkTopicForDeletion("later"); err != nil {
		t.Fatal(err)
	}
	n1b := cl.startNode(1, nil)
	waitActive(t, n1b)
	testwait.For(t, waitTimeout, func() error { return topicGone(zc, "later") })
}
