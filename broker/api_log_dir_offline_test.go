package broker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
	"samsa/kafka"
)

// twoDirCluster starts one broker with two log dirs and creates topics
// "od" and "hd" (one partition, RF 1): new logs go to the dir with the
// fewest, config order breaking ties, so od-0 lands in the first dir and
// hd-0 in the second. It returns the cluster and both dirs.
func twoDirCluster(t *testing.T, opts ...brokertest.Option) (*brokertest.Cluster, [2]string) {
	t.Helper()
	dirs := [2]string{t.TempDir(), t.TempDir()}
	opts = append(opts, brokertest.WithProperty("log.dirs", dirs[0]+","+dirs[1]))
	c := brokertest.NewCluster(t, 1, opts...)
	for i, topic := range []string{"od", "hd"} {
		c.CreateTopic(t, topic, 1, 1)
		tp := kafka.TopicPartition{Topic: topic}
		brokertest.WaitFor(t, 30*time.Second, func() error {
			p := c.Broker(0).Replicas().Partition(tp)
			if p == nil || p.Log() == nil || !p.State().IsLeader {
				return fmt.Errorf("%s not led yet", tp)
			}
			return nil
		})
		if got := filepath.Dir(c.Broker(0).Replicas().Partition(tp).Log().Dir()); got != dirs[i] {
			t.Fatalf("%s in %s, want %s", tp, got, dirs[i])
		}
	}
	return c, dirs
}

// deleteRecordsOne sends DeleteRecords v1 for topic-0 up to offset and
// returns the partition's error code.
func deleteRecordsOne(t *testing.T, addr, topic string, offset int64) int16 {
	t.Helper()
	rc := brokertest.DialRaw(t, addr)
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.SetVersion(1)
	req.TimeoutMillis = 5000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kr.(*kmsg.DeleteRecordsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("delete records: %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// TestAPILogDirOfflinePartitionAnswers: once the replica manager has taken
// the partitions of a failed log dir offline (ReplicaManager.HandleLogDirFailure,
// Kafka's HostedPartition.Offline), Produce, Fetch, ListOffsets,
// OffsetForLeaderEpoch and DeleteRecords on them answer KAFKA_STORAGE_ERROR
// over the wire, while the partition in the other dir keeps serving.
func TestAPILogDirOfflinePartitionAnswers(t *testing.T) {
	c, dirs := twoDirCluster(t)
	addr := c.Addr(0)
	rc := brokertest.DialRaw(t, addr)
	batch := edgeBatch(t, record.CodecNone)
	both := []edgePart{{name: "od", topic: "od", records: batch}, {name: "hd", topic: "hd", records: batch}}
	if codes := edgeProduce(t, rc, 8, 1, both); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("produce before: %v", codes)
	}
	if got := c.Broker(0).Replicas().HandleLogDirFailure(dirs[0]); len(got) != 1 || got[0].Topic != "od" {
		t.Fatalf("offline %v, want [od-0]", got)
	}
	storageErr := kerr.KafkaStorageError.Code
	if codes := edgeProduce(t, rc, 8, -1, both); codes[0] != storageErr || codes[1] != 0 {
		t.Errorf("produce after: %v, want [%d 0]", codes, storageErr)
	}
	if rp := brokertest.FollowerFetch(t, addr, "od", 11, -1, 0, -1, 0); rp.ErrorCode != storageErr {
		t.Errorf("fetch od: error %d", rp.ErrorCode)
	}
	if rp := brokertest.FollowerFetch(t, addr, "hd", 11, -1, 0, -1, 0); rp.ErrorCode != 0 || len(rp.RecordBatches) == 0 {
		t.Errorf("fetch hd: error %d, %d bytes", rp.ErrorCode, len(rp.RecordBatches))
	}
	if p := listOffsetsOne(t, addr, "od", 4, -1, -1, -1); p.ErrorCode != storageErr {
		t.Errorf("list offsets od: error %d", p.ErrorCode)
	}
	if p := listOffsetsOne(t, addr, "hd", 4, -1, -1, -1); p.ErrorCode != 0 || p.Offset != 2 {
		t.Errorf("list offsets hd: error %d, offset %d", p.ErrorCode, p.Offset)
	}
	if p := epochEndOne(t, addr, "od", 3, -1, 0); p.ErrorCode != storageErr {
		t.Errorf("offset for leader epoch od: error %d", p.ErrorCode)
	}
	if code := deleteRecordsOne(t, addr, "od", 1); code != storageErr {
		t.Errorf("delete records od: error %d", code)
	}
	if code := deleteRecordsOne(t, addr, "hd", 1); code != 0 {
		t.Errorf("delete records hd: error %d", code)
	}
}

// TestAPILogDirFailureKeepsServingOtherDirs: a real disk error in one of a
// broker's two log dirs (od-0's directory removed, so its next segment
// roll fails) does not stop the broker. od-0 answers KAFKA_STORAGE_ERROR,
// DescribeLogDirs reports the dir as KAFKA_STORAGE_ERROR, the log dir event
// notification reaches the controller, whose LeaderAndIsr is answered
// KAFKA_STORAGE_ERROR for od-0 so it takes that replica offline (no other
// replica: no leader), and hd-0 in the healthy dir keeps its leader and
// keeps serving.
func TestAPILogDirFailureKeepsServingOtherDirs(t *testing.T) {
	c, dirs := twoDirCluster(t, brokertest.WithProperty("log.segment.bytes", "1024"),
		brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	b := c.Broker(0)
	addr := c.Addr(0)
	rc := brokertest.DialRaw(t, addr)
	od := kafka.TopicPartition{Topic: "od"}
	if err := os.RemoveAll(b.Replicas().Partition(od).Log().Dir()); err != nil {
		t.Fatal(err)
	}
	batch := edgeBatch(t, record.CodecNone)
	storageErr := kerr.KafkaStorageError.Code
	code := int16(0)
	for i := 0; i < 100 && code == 0; i++ {
		code = edgeProduce(t, rc, 8, 1, []edgePart{{name: "od", topic: "od", records: batch}})[0]
	}
	if code != storageErr {
		t.Fatalf("produce to od-0 after its directory vanished: error %d", code)
	}
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if !b.Replicas().IsOffline(od) {
			return fmt.Errorf("od-0 not offline")
		}
		return nil
	})
	// Kafka's ReplicaManager gauges: the offline replica still counts in PartitionCount.
	for sample, want := range map[string]float64{
		"kafka_server_replicamanager_offlinereplicacount": 1,
		"kafka_server_replicamanager_partitioncount":      2,
	} {
		if v, err := brokertest.ScrapeValue(c, 0, sample); err != nil || v != want {
			t.Errorf("%s = %v (%v), want %v", sample, v, err, want)
		}
	}
	ld := brokertest.DescribeLogDirs(t, addr)
	if d := ld[dirs[0]]; d.ErrorCode != storageErr || len(d.Topics) != 0 {
		t.Errorf("failed dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}
	if d := ld[dirs[1]]; d.ErrorCode != 0 || len(d.Topics) != 1 {
		t.Errorf("healthy dir: error %d, topics %v", d.ErrorCode, d.Topics)
	}
	zk := c.ZooKeeper(t)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		s, _, err := zk.GetPartitionState("od", 0)
		if err != nil {
			return err
		}
		if s.Leader != -1 {
			return fmt.Errorf("od-0: leader %d, want none (its only replica is offline)", s.Leader)
		}
		return nil
	})
	s, _, err := zk.GetPartitionState("hd", 0)
	if err != nil || s.Leader != b.ID() {
		t.Fatalf("hd-0: leader %d, err %v", s.Leader, err)
	}
	for i := 0; i < 3; i++ {
		if codes := edgeProduce(t, rc, 8, -1, []edgePart{{name: "hd", topic: "hd", records: batch}}); codes[0] != 0 {
			t.Fatalf("produce to hd-0: error %d", codes[0])
		}
	}
	if rp := brokertest.FollowerFetch(t, addr, "hd", 11, -1, 0, -1, 0); rp.ErrorCode != 0 || len(rp.RecordBatches) == 0 {
		t.Errorf("fetch hd-0: error %d, %d bytes", rp.ErrorCode, len(rp.RecordBatches))
	}
}
