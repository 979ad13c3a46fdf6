package controller

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/internal/testwait"
	"samsa/kafka"
	"samsa/zkutil"
)

// failedDirs is the test double of a broker whose log dir failed: LeaderAndIsr requests to
// broker are answered KAFKA_STORAGE_ERROR for the partitions in the set, NONE for the
// others (Kafka's ReplicaManager.becomeLeaderOrFollower for offline partitions).
type failedDirs struct {
	broker int32
	mu     sync.Mutex
	failed map[kafka.TopicPartition]bool
}

func (f *failedDirs) set(tps ...kafka.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = make(map[kafka.TopicPartition]bool)
	for _, tp := range tps {
		f.failed[tp] = true
	}
}

func (f *failedDirs) isFailed(tp kafka.TopicPartition) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed[tp]
}

// respond is a recorder.respond function.
func (f *failedDirs) respond(broker int32, req kmsg.Request) kmsg.Response {
	lai, ok := req.(*kmsg.LeaderAndISRRequest)
	if !ok || broker != f.broker {
		return nil
	}
	resp := lai.ResponseKind().(*kmsg.LeaderAndISRResponse)
	for _, ts := range lai.TopicStates {
		rt := kmsg.NewLeaderAndISRResponseTopic()
		rt.TopicID = ts.TopicID
		for _, ps := range ts.PartitionStates {
			p := kmsg.NewLeaderAndISRResponseTopicPartition()
			p.Partition = ps.Partition
			if f.isFailed(kafka.TopicPartition{Topic: ts.Topic, Partition: ps.Partition}) {
				p.ErrorCode = kerr.KafkaStorageError.Code
			}
			if lai.Version >= 5 {
				rt.Partitions = append(rt.Partitions, p)
			} else {
				p.Topic = ts.Topic
				resp.Partitions = append(resp.Partitions, p)
			}
		}
		if lai.Version >= 5 {
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp
}

// offlineDirs returns the controller's replicasOnOfflineDirs for broker, sorted.
func offlineDirs(t *testing.T, n *node, broker int32) []kafka.TopicPartition {
	t.Helper()
	var out []kafka.TopicPartition
	if err := n.c.sync(t.Context(), func() {
		for tp := range n.c.cc.replicasOnOfflineDirs[broker] {
			out = append(out, tp)
		}
	}); err != nil {
		t.Fatal(err)
	}
	kafka.SortPartitions(out)
	return out
}

// wantUpdateMetadata waits until the last UpdateMetadata for topic/p sent to broker shows
// leader and offline replicas.
func wantUpdateMetadata(t *testing.T, cl *cluster, broker int32, topic string, p, leader int32, offline []int32) {
	t.Helper()
	testwait.For(t, waitTimeout, func() error {
		um, _ := updateMetadataFor(cl.rec, broker, topic, p)
		if len(um) == 0 {
			return fmt.Errorf("no UpdateMetadata for %s-%d to broker %d", topic, p, broker)
		}
		last := um[len(um)-1]
		if last.Leader != leader || !slices.Equal(last.OfflineReplicas, offline) {
			return fmt.Errorf("UpdateMetadata %s-%d to broker %d: leader %d offline %v, want %d %v",
				topic, p, broker, last.Leader, last.OfflineReplicas, leader, offline)
		}
		return nil
	})
}

// startLogDirCluster starts controller node 1 on cl, whose broker 2 answers LeaderAndIsr from
// the returned failedDirs, and registers brokers 2 and 3. It returns the failedDirs, node 1,
// broker 2's ZooKeeper session and an admin session.
func startLogDirCluster(t *testing.T, cl *cluster) (*failedDirs, *node, *zkutil.Client, *zkutil.Client) {
	t.Helper()
	f := &failedDirs{broker: 2}
	cl.rec.respond = f.respond
	n1 := cl.startNode(1, nil)
	waitActive(t, n1)
	z2, z3, admin := cl.zk(), cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	cl.registerBroker(z3, 3, "")
	waitBrokerKnown(t, cl, 3)
	return f, n1, z2, admin
}

// TestControllerLogDirStorageError follows KIP-112's LeaderAndIsrResponseReceived: broker 2
// answers KAFKA_STORAGE_ERROR for the partitions of topic d (it cannot create them: their log
// dir failed). The partition it leads moves to the other ISR replica, it leaves every ISR,
// UpdateMetadata names it offline although it is live, and a partition with no other replica
// keeps leader -1. Topic ok on the same broker is untouched. When broker 2 registers again
// (its dirs reloaded), its replicas count as online again.
func TestControllerLogDirStorageError(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	f, n1, z2, admin := startLogDirCluster(t, cl)
	f.set(kafka.TopicPartition{Topic: "d", Partition: 0}, kafka.TopicPartition{Topic: "d", Partition: 1}, kafka.TopicPartition{Topic: "d", Partition: 2})
	createTopic(t, admin, "ok", map[int32][]int32{0: {2, 3}})
	createTopic(t, admin, "d", map[int32][]int32{0: {2, 3}, 1: {3, 2}, 2: {2}})

	wantState(t, admin, "d", 0, 3, []int32{3}, 1)
	wantState(t, admin, "d", 1, 3, []int32{3}, 1)
	wantState(t, admin, "d", 2, NoLeader, []int32{2}, 1)
	wantState(t, admin, "ok", 0, 2, []int32{2, 3}, 0)
	if got := leaderAndIsrFor(cl.rec, 3, "d", 0); len(got) == 0 || got[0].Leader != 2 {
		t.Fatalf("d-0 was not led by broker 2 first: %+v", got)
	}
	for _, b := range []int32{1, 3} {
		wantUpdateMetadata(t, cl, b, "d", 0, 3, []int32{2})
		wantUpdateMetadata(t, cl, b, "d", 1, 3, []int32{2})
		wantUpdateMetadata(t, cl, b, "d", 2, NoLeader, []int32{2})
	}
	wantUpdateMetadata(t, cl, 1, "ok", 0, 2, []int32{})
	testwait.For(t, waitTimeout, func() error {
		// The offline replica is stopped (delete=false) with the new leader epoch.
		if cl.rec.firstIndex(2, 5, func(r kmsg.Request) bool {
			sr := r.(*kmsg.StopReplicaRequest)
			return len(sr.Topics) > 0 && sr.Topics[0].Topic == "d" && !sr.Topics[0].PartitionStates[0].Delete
		}) < 0 {
			return errors.New("no StopReplica for d to broker 2")
		}
		if v := n1.c.metrics.offline.Load(); v != 1 {
			return fmt.Errorf("OfflinePartitionsCount %d, want 1 (d-2)", v)
		}
		return nil
	})
	if got := offlineDirs(t, n1, 2); len(got) != 3 {
		t.Fatalf("replicasOnOfflineDirs[2] = %v", got)
	}

	// Broker 2 restarts with its dirs repaired: a new registration clears its offline
	// replicas, d-2 elects it again and UpdateMetadata no longer names it offline. (Its
	// death bumped d-2's leader epoch once more: the ISR shrink of a replica that is the
	// last ISR member still writes, as Kafka's does.)
	f.set()
	z2.Close()
	z2b := cl.zk()
	cl.registerBroker(z2b, 2, "")
	wantState(t, admin, "d", 2, 2, []int32{2}, 3)
	for _, b := range []int32{1, 2, 3} {
		wantUpdateMetadata(t, cl, b, "d", 2, 2, []int32{})
		wantUpdateMetadata(t, cl, b, "d", 0, 3, []int32{})
	}
	if got := offlineDirs(t, n1, 2); len(got) != 0 {
		t.Fatalf("replicasOnOfflineDirs[2] after re-registration = %v", got)
	}
	testwait.For(t, waitTimeout, func() error {
		if v := n1.c.metrics.offline.Load(); v != 0 {
			return fmt.Errorf("OfflinePartitionsCount %d, want 0", v)
		}
		return nil
	})
}

// TestControllerLogDirEventNotification: a log dir failure notification for broker 2 makes
// the controller send broker 2 LeaderAndIsr for every partition it hosts and delete the
// notification; notifications of other event types or of brokers that are not live only
// get deleted. When broker 2 answers KAFKA_STORAGE_ERROR for one partition, that replica
// goes offline and leadership moves.
func TestControllerLogDirEventNotification(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	f, n1, z2, admin := startLogDirCluster(t, cl)
	createTopic(t, admin, "e", map[int32][]int32{0: {2, 3}, 1: {3, 2}, 2: {3}})
	wantState(t, admin, "e", 0, 2, []int32{2, 3}, 0)
	wantState(t, admin, "e", 1, 3, []int32{3, 2}, 0)
	testwait.For(t, waitTimeout, func() error {
		if len(leaderAndIsrFor(cl.rec, 2, "e", 0)) == 0 || len(leaderAndIsrFor(cl.rec, 2, "e", 1)) == 0 {
			return errors.New("broker 2 has not heard of e yet")
		}
		return nil
	})
	before0, before1 := len(leaderAndIsrFor(cl.rec, 2, "e", 0)), len(leaderAndIsrFor(cl.rec, 2, "e", 1))

	for _, data := range []string{`{"version":1,"broker":9,"event":1}`, `{"version":1,"broker":3,"event":2}`} {
		if _, err := admin.Create(zkutil.LogDirEventNotificationPath()+"/"+zkutil.LogDirEventSeqPrefix, []byte(data), zkutil.PersistentSequential); err != nil {
			t.Fatal(err)
		}
	}
	if err := z2.WriteLogDirEventNotification(2); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		got0, got1 := leaderAndIsrFor(cl.rec, 2, "e", 0), leaderAndIsrFor(cl.rec, 2, "e", 1)
		if len(got0) <= before0 || len(got1) <= before1 {
			return fmt.Errorf("broker 2 LeaderAndIsr for e-0 %d, e-1 %d (before %d, %d)", len(got0), len(got1), before0, before1)
		}
		if l := got0[len(got0)-1]; l.Leader != 2 || l.LeaderEpoch != 0 || l.IsNew {
			return fmt.Errorf("e-0 state sent %+v", l)
		}
		return nil
	})
	waitNoneLeft(t, "log dir event notifications", admin.GetLogDirEventNotifications)
	if n := len(leaderAndIsrFor(cl.rec, 2, "e", 2)); n != 0 {
		t.Fatalf("broker 2 got LeaderAndIsr for e-2, which it does not host (%d)", n)
	}
	if got := offlineDirs(t, n1, 2); len(got) != 0 {
		t.Fatalf("replicas offline after NONE answers: %v", got)
	}

	// An answer to an older registration of broker 2 is ignored.
	var epoch int64
	if err := n1.c.sync(t.Context(), func() { epoch = n1.c.cc.liveBrokers[2].Epoch }); err != nil {
		t.Fatal(err)
	}
	n1.c.enqueue(leaderAndIsrResponseEvent{broker: 2, brokerEpoch: epoch - 1, controllerEpoch: n1.c.Epoch(),
		outcome: leaderAndIsrOutcome{offline: []kafka.TopicPartition{{Topic: "e", Partition: 1}}}})
	if got := offlineDirs(t, n1, 2); len(got) != 0 {
		t.Fatalf("stale answer marked %v offline", got)
	}

	// Now e-0's dir fails on broker 2: the next notification finds it.
	f.set(kafka.TopicPartition{Topic: "e", Partition: 0})
	if err := z2.WriteLogDirEventNotification(2); err != nil {
		t.Fatal(err)
	}
	wantState(t, admin, "e", 0, 3, []int32{3}, 1)
	wantState(t, admin, "e", 1, 3, []int32{3, 2}, 0)
	wantUpdateMetadata(t, cl, 3, "e", 0, 3, []int32{2})
	waitNoneLeft(t, "log dir event notifications", admin.GetLogDirEventNotifications)
	if got := offlineDirs(t, n1, 2); !slices.Equal(got, []kafka.TopicPartition{{Topic: "e", Partition: 0}}) {
		t.Fatalf("replicasOnOfflineDirs[2] = %v", got)
	}
	// A preferred election does not move e-0 back to the offline replica.
	if res, err := n1.c.ElectLeaders(t.Context(), ElectionPreferred, []kafka.TopicPartition{{Topic: "e", Partition: 0}}); err != nil || res[kafka.TopicPartition{Topic: "e", Partition: 0}] == nil {
		t.Fatalf("preferred election of e-0: %v %v", res, err)
	}
	wantState(t, admin, "e", 0, 3, []int32{3}, 1)
}

// TestControllerLogDirUncleanElection: with broker 2's only ISR replica on a failed dir,
// unclean.leader.election.enable decides whether the live out-of-sync replica on broker 3
// (registered later) may lead.
func TestControllerLogDirUncleanElection(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	f := &failedDirs{broker: 2}
	f.set(kafka.TopicPartition{Topic: "clean", Partition: 0}, kafka.TopicPartition{Topic: "dirty", Partition: 0})
	cl.rec.respond = f.respond
	n1 := cl.startNode(1, nil)
	waitActive(t, n1)
	z2, admin := cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	waitBrokerKnown(t, cl, 2)
	createTopic(t, admin, "clean", map[int32][]int32{0: {2, 3}})
	if err := admin.CreateTopic("dirty", map[int32][]int32{0: {2, 3}}, map[string]string{"unclean.leader.election.enable": "true"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, admin, "clean", 0, NoLeader, []int32{2}, 1)
	wantState(t, admin, "dirty", 0, NoLeader, []int32{2}, 1)
	z3 := cl.zk()
	cl.registerBroker(z3, 3, "")
	wantState(t, admin, "dirty", 0, 3, []int32{3}, 2)
	testwait.For(t, waitTimeout, func() error {
		if len(leaderAndIsrFor(cl.rec, 3, "clean", 0)) == 0 {
			return errors.New("broker 3 not started on the controller")
		}
		return nil
	})
	wantState(t, admin, "clean", 0, NoLeader, []int32{2}, 1)
}

// TestControllerLogDirEventsDeletedAtFailover: notifications left while no controller ran
// are deleted by the next one (its LeaderAndIsr to every broker replaces them).
func TestControllerLogDirEventsDeletedAtFailover(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	admin := cl.zk()
	for _, id := range []int32{2, 3} {
		if err := admin.WriteLogDirEventNotification(id); err != nil {
			t.Fatal(err)
		}
	}
	n1 := cl.startNode(1, nil)
	waitActive(t, n1)
	waitNoneLeft(t, "log dir event notifications", admin.GetLogDirEventNotifications)
}

// TestControllerLogDirFailover: a new controller knows no failed dirs; the LeaderAndIsr it
// sends every broker at failover finds them (broker 2 answers KAFKA_STORAGE_ERROR for g-0,
// whose dir failed under the previous controller) and moves leadership away.
func TestControllerLogDirFailover(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	f := &failedDirs{broker: 2}
	cl.rec.respond = f.respond
	n1 := cl.startNode(1, nil)
	waitActive(t, n1)
	n3 := cl.startNode(3, nil)
	z2, z4, admin := cl.zk(), cl.zk(), cl.zk()
	cl.registerBroker(z2, 2, "")
	cl.registerBroker(z4, 4, "")
	waitBrokerKnown(t, cl, 4)
	createTopic(t, admin, "g", map[int32][]int32{0: {2, 4}})
	wantState(t, admin, "g", 0, 2, []int32{2, 4}, 0)

	f.set(kafka.TopicPartition{Topic: "g", Partition: 0})
	n1.c.Shutdown()
	n1.zk.Close()
	waitActive(t, n3)
	wantState(t, admin, "g", 0, 4, []int32{4}, 1)
	wantUpdateMetadata(t, cl, 4, "g", 0, 4, []int32{2})
	if got := offlineDirs(t, n3, 2); !slices.Equal(got, []kafka.TopicPartition{{Topic: "g", Partition: 0}}) {
		t.Fatalf("replicasOnOfflineDirs[2] = %v", got)
	}
}

// TestControllerLogDirTopicDeletion: a topic with a replica on a failed log dir of a live
// broker is deleted everywhere else but kept (with its marker) while that replica is offline,
// as Kafka's TopicDeletionManager treats replicas that are not online; once the broker
// registers again with its dirs repaired, the deletion completes.
func TestControllerLogDirTopicDeletion(t *testing.T) {
	t.Parallel()
	cl := newCluster(t)
	f, n1, z2, admin := startLogDirCluster(t, cl)
	gone := kafka.TopicPartition{Topic: "gone", Partition: 0}
	f.set(gone)
	createTopic(t, admin, "gone", map[int32][]int32{0: {2, 3}})
	wantState(t, admin, "gone", 0, 3, []int32{3}, 1)
	testwait.For(t, waitTimeout, func() error {
		if got := offlineDirs(t, n1, 2); !slices.Equal(got, []kafka.TopicPartition{gone}) {
			return fmt.Errorf("replicasOnOfflineDirs[2] = %v", got)
		}
		return nil
	})
	if err := admin.MarkTopicForDeletion("gone"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, waitTimeout, func() error {
		var online, offline ReplicaState
		if err := n1.c.sync(t.Context(), func() {
			online = n1.c.cc.replicaStates[PartitionReplica{gone, 3}]
			offline = n1.c.cc.replicaStates[PartitionReplica{gone, 2}]
		}); err != nil {
			return err
		}
		if online != ReplicaDeletionSuccessful || (offline != ReplicaDeletionIneligible && offline != OfflineReplica) {
			return fmt.Errorf("replica 3 %v, replica 2 %v", online, offline)
		}
		return nil
	})
	if exists, _ := admin.TopicExists("gone"); !exists {
		t.Fatal("topic deleted while a replica sits on a failed log dir")
	}
	f.set()
	z2.Close()
	cl.registerBroker(cl.zk(), 2, "")
	testwait.For(t, waitTimeout, func() error { return topicGone(admin, "gone") })
	if got := offlineDirs(t, n1, 2); len(got) != 0 {
		t.Errorf("replicasOnOfflineDirs[2] after the deletion = %v", got)
	}
}
