package clustertest_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// groupCoordinator returns a fresh Sarama client and the group's current
// coordinator (FindCoordinator), retrying until one answers.
func groupCoordinator(t *testing.T, c *brokertest.Cluster, group string) (sarama.Client, *sarama.Broker) {
	t.Helper()
	var cl sarama.Client
	var coord *sarama.Broker
	brokertest.WaitFor(t, 60*time.Second, func() error {
		if cl != nil {
			_ = cl.Close()
		}
		var err error
		if cl, err = sarama.NewClient(c.Addrs(), brokertest.SaramaConfig(sarama.V2_8_0_0)); err != nil {
			cl = nil
			return err
		}
		coord, err = cl.Coordinator(group)
		return err
	})
	t.Cleanup(func() { _ = cl.Close() })
	return cl, coord
}

// commitOffset commits offset for topic/0 with generation -1 (a group that
// only stores offsets) and retries coordinator errors.
func commitOffset(t *testing.T, c *brokertest.Cluster, group, topic string, offset int64) {
	t.Helper()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		_, coord := groupCoordinator(t, c, group)
		req := &sarama.OffsetCommitRequest{Version: 2, ConsumerGroup: group, ConsumerGroupGeneration: -1, RetentionTime: -1}
		req.AddBlock(topic, 0, offset, 0, fmt.Sprintf("meta-%d", offset))
		resp, err := coord.CommitOffset(req)
		if err != nil {
			return err
		}
		if kerr := resp.Errors[topic][0]; !errors.Is(kerr, sarama.ErrNoError) {
			return kerr
		}
		return nil
	})
}

// fetchOffset returns the committed offset of topic/0, retrying
// coordinator errors (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS).
func fetchOffset(t *testing.T, c *brokertest.Cluster, group, topic string, want int64) {
	t.Helper()
	brokertest.WaitFor(t, 60*time.Second, func() error {
		_, coord := groupCoordinator(t, c, group)
		req := &sarama.OffsetFetchRequest{Version: 2, ConsumerGroup: group}
		req.AddPartition(topic, 0)
		resp, err := coord.FetchOffset(req)
		if err != nil {
			return err
		}
		if !errors.Is(resp.Err, sarama.ErrNoError) {
			return resp.Err
		}
		b := resp.GetBlock(topic, 0)
		if b == nil {
			return errors.New("no block")
		}
		if !errors.Is(b.Err, sarama.ErrNoError) {
			return b.Err
		}
		if b.Offset != want || b.Metadata != fmt.Sprintf("meta-%d", want) {
			return fmt.Errorf("offset %d metadata %q, want %d", b.Offset, b.Metadata, want)
		}
		return nil
	})
}

// TestClusterGroupCoordinatorFailover: Kafka moves a group's coordinator
// with the leadership of its __consumer_offsets partition. Offsets
// committed with acks=all survive killing the coordinator: the new leader
// replays the partition (loading) and answers with them; the restarted
// broker becomes a follower again and, when leadership returns to it, loads
// what the other coordinator wrote meanwhile.
func TestClusterGroupCoordinatorFailover(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("offsets.topic.num.partitions", "3"),
		brokertest.WithProperty("offsets.topic.replication.factor", "3"))
	c.CreateTopic(t, "fo", 1, 3)
	const group = "failover-group"

	commitOffset(t, c, group, "fo", 42)
	fetchOffset(t, c, group, "fo", 42)

	_, coord := groupCoordinator(t, c, group)
	first := c.Index(coord.ID())
	c.Kill(first)
	fetchOffset(t, c, group, "fo", 42)
	commitOffset(t, c, group, "fo", 43)

	c.Restart(first)
	_, coord = groupCoordinator(t, c, group)
	second := c.Index(coord.ID())
	if second == first {
		t.Fatalf("coordinator did not move off killed broker %d", first)
	}
	c.Kill(second)
	fetchOffset(t, c, group, "fo", 43)
}

// TestClusterFindCoordinatorTooFewBrokers: Kafka 0.11+ does not create
// __consumer_offsets with a smaller replication factor than
// offsets.topic.replication.factor; FindCoordinator answers
// COORDINATOR_NOT_AVAILABLE (clients retry) and the topic stays absent.
func TestClusterFindCoordinatorTooFewBrokers(t *testing.T) {
	c := brokertest.NewCluster(t, 1) // offsets.topic.replication.factor defaults to 3
	b := sarama.NewBroker(c.Addr(0))
	if err := b.Open(brokertest.SaramaConfig(sarama.V2_8_0_0)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	for i := 0; i < 2; i++ {
		resp, err := b.FindCoordinator(&sarama.FindCoordinatorRequest{Version: 2, CoordinatorKey: "g", CoordinatorType: sarama.CoordinatorGroup})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(resp.Err, sarama.ErrConsumerCoordinatorNotAvailable) {
			t.Fatalf("FindCoordinator = %v, want COORDINATOR_NOT_AVAILABLE", resp.Err)
		}
	}
	if _, ok := c.Broker(0).Metadata().Topics["__consumer_offsets"]; ok {
		t.Fatal("__consumer_offsets created with fewer brokers than its replication factor")
	}
}
