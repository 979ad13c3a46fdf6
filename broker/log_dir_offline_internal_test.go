package broker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/record"
	"samsa/broker/replica"
	"samsa/config"
	"samsa/internal/testwait"
	"samsa/kafka"
)

// offlineBroker is a Broker with real logs over two log dirs and a replica
// manager, but no ZooKeeper, server or controller: its API handlers are
// called directly. Segments are small, so appends roll often. OnFatal
// reports on fatal.
func offlineBroker(t *testing.T) (b *Broker, dirs []string, fatal chan error) {
	t.Helper()
	dirs = []string{t.TempDir(), t.TempDir()}
	cfg, _, err := config.NewBroker(map[string]string{
		"broker.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0",
		"log.dirs": dirs[0] + "," + dirs[1], "zookeeper.connect": "127.0.0.1:1",
		"log.segment.bytes": "1024",
	})
	if err != nil {
		t.Fatal(err)
	}
	fatal = make(chan error, 4)
	b, err = New(cfg, Options{OnFatal: func(err error) { fatal <- err }})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.openLogs(); err != nil {
		t.Fatal(err)
	}
	newTestReplicas(t, b)
	b.replicasUp.Store(true) // as Start does once the replica manager exists
	t.Cleanup(func() { b.replicas.Close(); _ = b.closeLogs() })
	return b, dirs, fatal
}

// leaderAndIsr sends a LeaderAndIsr v4 making broker 1 the only replica
// and leader of tps at leader epoch epoch, with IsNew (as the controller
// sends for a new partition), and returns the error code of each partition.
func leaderAndIsr(t *testing.T, b *Broker, epoch int32, tps ...kafka.TopicPartition) map[kafka.TopicPartition]int16 {
	t.Helper()
	return leaderAndIsrIsNew(t, b, epoch, true, tps...)
}

// leaderAndIsrIsNew is leaderAndIsr with the given IsNew.
func leaderAndIsrIsNew(t *testing.T, b *Broker, epoch int32, isNew bool, tps ...kafka.TopicPartition) map[kafka.TopicPartition]int16 {
	t.Helper()
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.SetVersion(4)
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 1, 1, -1
	for _, tp := range tps {
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Topic, ps.Partition, ps.ControllerEpoch = tp.Topic, tp.Partition, 1
		ps.Leader, ps.LeaderEpoch, ps.ISR, ps.Replicas = 1, epoch, []int32{1}, []int32{1}
		ps.IsNew = isNew
		req.PartitionStates = append(req.PartitionStates, ps)
	}
	resp, err := b.handleLeaderAndISR(&request{ctx: context.Background(), body: req})
	if err != nil {
		t.Fatal(err)
	}
	lr := resp.(*kmsg.LeaderAndISRResponse)
	if lr.ErrorCode != 0 {
		t.Fatalf("LeaderAndIsr: error %d", lr.ErrorCode)
	}
	out := map[kafka.TopicPartition]int16{}
	for _, p := range lr.Partitions {
		out[kafka.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.ErrorCode
	}
	return out
}

// describeLogDirs returns DescribeLogDirs v2's answer, by dir.
func describeLogDirs(t *testing.T, b *Broker) map[string]kmsg.DescribeLogDirsResponseDir {
	t.Helper()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.SetVersion(2)
	resp, err := b.handleDescribeLogDirs(&request{ctx: context.Background(), body: req})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kmsg.DescribeLogDirsResponseDir{}
	for _, d := range resp.(*kmsg.DescribeLogDirsResponse).Dirs {
		out[d.Dir] = d
	}
	return out
}

// newTestReplicas gives b a replica manager over its logs with the broker's default topic
// config and min.insync.replicas 1, as Start would (no fetcher, no ISR store).
func newTestReplicas(t *testing.T, b *Broker) {
	t.Helper()
	defaults, err := config.TopicFromOverrides(b.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.replicas, err = replica.New(replica.Config{BrokerID: 1, Logs: b.logProvider(),
		TopicConfig: func(string) (replica.TopicConfig, error) {
			return replica.TopicConfig{Log: b.logConfig(defaults), MinInsyncReplicas: 1}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
}

// leadAH makes b the leader (epoch 0) of a-0 and h-0 and returns them; new logs go to the
// dir with the fewest, in config order, so with two dirs a-0 lands in the first, h-0 in the
// second.
func leadAH(t *testing.T, b *Broker) (a0, h0 kafka.TopicPartition) {
	t.Helper()
	a0, h0 = kafka.TopicPartition{Topic: "a"}, kafka.TopicPartition{Topic: "h"}
	for tp, code := range leaderAndIsr(t, b, 0, a0, h0) {
		if code != 0 {
			t.Fatalf("%s: error %d", tp, code)
		}
	}
	return a0, h0
}

// testBatch is one record batch of value.
func testBatch(t *testing.T, value string) []byte {
	t.Helper()
	bt, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()),
		[]record.Record{{Value: []byte(value)}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// failLogDir breaks tp's log for real (its directory is removed, so its
// next roll fails) and appends until the append fails; it returns the log
// dir that held it, which the storage manager has taken offline.
func failLogDir(t *testing.T, b *Broker, tp kafka.TopicPartition) string {
	t.Helper()
	l := b.replicas.Partition(tp).Log()
	root := filepath.Dir(l.Dir())
	if err := os.RemoveAll(l.Dir()); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = b.replicas.AppendAsLeader(tp, testBatch(t, "filler to make the segment roll"), 1)
	}
	if b.errorCode(err) != kerr.KafkaStorageError.Code {
		t.Fatalf("append after the log's directory vanished: %v", err)
	}
	if _, ok := b.logs.OfflineDirs()[root]; !ok {
		t.Fatalf("%s not offline: %v", root, b.logs.OfflineDirs())
	}
	return root
}

// waitOffline waits until tp is offline on b.
func waitOffline(t *testing.T, b *Broker, tp kafka.TopicPartition) {
	t.Helper()
	testwait.Until(t, 10*time.Second, fmt.Sprintf("%s to be taken offline", tp), func() bool { return b.replicas.IsOffline(tp) })
}

// TestAPILogDirFailureOfflineAnswers: after a real disk error in one of
// two log dirs, which the storage manager's hook answers by taking the
// dir's partitions offline: DescribeLogDirs answers
// KAFKA_STORAGE_ERROR with no topics for the failed dir and NONE with its
// partitions for the other; the failed dir's partition answers
// KAFKA_STORAGE_ERROR to every request, LeaderAndIsr and StopReplica
// included, while the healthy dir's partition keeps serving and a new
// partition is created in the healthy dir.
func TestAPILogDirFailureOfflineAnswers(t *testing.T) {
	b, dirs, _ := offlineBroker(t)
	a0, h0 := leadAH(t, b)
	n0 := kafka.TopicPartition{Topic: "n"}
	// New logs go to the dir with the fewest, in config order.
	if got := filepath.Dir(b.replicas.Partition(a0).Log().Dir()); got != dirs[0] {
		t.Fatalf("a-0 in %s, want %s", got, dirs[0])
	}
	failLogDir(t, b, a0)
	waitOffline(t, b, a0) // the storage manager's hook takes it offline

	ld := describeLogDirs(t, b)
	if d := ld[dirs[0]]; d.ErrorCode != kerr.KafkaStorageError.Code || len(d.Topics) != 0 {
		t.Errorf("failed dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}
	if d := ld[dirs[1]]; d.ErrorCode != 0 || len(d.Topics) != 1 || d.Topics[0].Topic != "h" {
		t.Errorf("healthy dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}

	checks := map[string]error{}
	_, checks["produce"] = b.replicas.AppendAsLeader(a0, testBatch(t, "x"), -1)
	_, checks["fetch"] = b.replicas.Read(a0, replica.ReadParams{ReplicaID: -1, MaxBytes: 1024, CurrentLeaderEpoch: -1})
	_, checks["list offsets"] = b.replicas.ListOffset(a0, -1, -1, -1, false)
	_, checks["offset for leader epoch"] = b.replicas.EndOffsetForEpoch(a0, 0, -1, -1)
	_, checks["delete records"] = b.replicas.DeleteRecords(a0, -1)
	for what, err := range checks {
		if code := b.errorCode(err); code != kerr.KafkaStorageError.Code {
			t.Errorf("%s on the offline partition: %d (%v)", what, code, err)
		}
	}
	if _, err := b.replicas.AppendAsLeader(h0, testBatch(t, "healthy"), -1); err != nil {
		t.Errorf("produce to the healthy dir: %v", err)
	}

	codes := leaderAndIsr(t, b, 1, a0, h0, n0)
	if codes[a0] != kerr.KafkaStorageError.Code || codes[h0] != 0 || codes[n0] != 0 {
		t.Errorf("LeaderAndIsr codes %v", codes)
	}
	if got := filepath.Dir(b.replicas.Partition(n0).Log().Dir()); got != dirs[1] {
		t.Errorf("new partition in %s, want the healthy %s", got, dirs[1])
	}

	stop := kmsg.NewPtrStopReplicaRequest()
	stop.SetVersion(3)
	stop.ControllerID, stop.ControllerEpoch, stop.BrokerEpoch = 1, 1, -1
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = "a"
	ps := kmsg.NewStopReplicaRequestTopicPartitionState()
	ps.LeaderEpoch, ps.Delete = -2, true
	st.PartitionStates = append(st.PartitionStates, ps)
	stop.Topics = append(stop.Topics, st)
	resp, err := b.handleStopReplica(&request{ctx: context.Background(), body: stop})
	if err != nil {
		t.Fatal(err)
	}
	if sr := resp.(*kmsg.StopReplicaResponse); len(sr.Partitions) != 1 || sr.Partitions[0].ErrorCode != kerr.KafkaStorageError.Code {
		t.Errorf("StopReplica: %+v", sr.Partitions)
	}
	if !b.replicas.IsOffline(a0) {
		t.Error("a-0 no longer offline after StopReplica")
	}
}

// TestAPILogDirFailureBeforeReplicasUp: a log dir failing between loading the logs and the
// replica manager's creation is ignored by the storage hook (there is nothing to take
// offline yet) and handled by Start's catch-up once the replica manager exists.
func TestAPILogDirFailureBeforeReplicasUp(t *testing.T) {
	b, _, _ := offlineBroker(t)
	a0, h0 := leadAH(t, b)
	b.replicasUp.Store(false)
	failLogDir(t, b, a0)
	if b.replicas.IsOffline(a0) {
		t.Fatal("the storage hook acted before the replica manager was up")
	}
	b.replicasUp.Store(true)
	b.catchUpLogDirFailures()
	waitOffline(t, b, a0)
	if b.replicas.IsOffline(h0) {
		t.Error("the healthy dir's partition went offline too")
	}
}
