package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
	"samsa/peer"
)

// TestClusterLogEndReassignment: a partition of ~3 MB in many segments moves
// to a new broker with the Samsa log-end option; the new replica starts at
// the leader's log end, so it copies none of the old segments, joins the
// ISR, and then follows new writes.
func TestClusterLogEndReassignment(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	ids := []int32{c.Broker(0).ID(), c.Broker(1).ID()}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	seg := "65536"
	createAssigned(t, admin, "cache", map[int32][]int32{0: {ids[0]}}, map[string]*string{"segment.bytes": &seg})
	c.WaitForLeader(t, "cache", 0)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = sarama.CompressionNone
	p := c.SyncProducer(t, cfg)
	value := make([]byte, 10_000)
	send := func(n int) {
		for i := 0; i < n; i++ {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "cache", Value: sarama.ByteEncoder(value)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(300)
	leo := c.Broker(0).Replicas().Partition(replicaTP("cache", 0)).State().LogEndOffset

	// AlterPartitionReassignments with the Samsa tag, straight to the controller.
	ctrl := c.Controller()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := peer.Dial(ctx, c.Addr(ctrl), "log-end-test")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "cache"
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = 0, []int32{ids[0], ids[1]}
	rp.UnknownTags.Set(wire.LogEndReassignmentTag, []byte{1})
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ar := resp.(*kmsg.AlterPartitionAssignmentsResponse)
	if ar.ErrorCode != 0 || ar.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("alter: %+v", ar)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		ps, ok := c.Broker(0).Metadata().Partition("cache", 0)
		if !ok || !slices.Equal(ps.Replicas, []int32{ids[0], ids[1]}) || len(ps.ISR) != 2 {
			return fmt.Errorf("partition state %+v", ps)
		}
		return nil
	})
	st := c.Broker(1).Replicas().Partition(replicaTP("cache", 0)).State()
	if st.LogStartOffset < leo {
		t.Fatalf("new replica starts at %d, leader's log end was %d: old records were copied", st.LogStartOffset, leo)
	}
	var size int64
	for _, d := range c.Broker(1).Config().LogDirs() {
		_ = filepath.Walk(filepath.Join(d, "cache-0"), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && filepath.Ext(fi.Name()) == ".log" {
				size += fi.Size()
			}
			return nil
		})
	}
	if size > 100_000 {
		t.Fatalf("new replica holds %d bytes of segments; the leader's %d records were copied", size, leo)
	}
	send(20)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		a := c.Broker(0).Replicas().Partition(replicaTP("cache", 0)).State()
		b := c.Broker(1).Replicas().Partition(replicaTP("cache", 0)).State()
		if b.LogEndOffset != a.LogEndOffset {
			return fmt.Errorf("follower at %d, leader at %d", b.LogEndOffset, a.LogEndOffset)
		}
		return nil
	})
	t.Logf("leader log end %d at the move; new replica started at %d with %d segment bytes", leo, st.LogStartOffset, size)
}
