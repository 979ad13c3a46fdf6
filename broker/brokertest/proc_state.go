package brokertest

// ProcCluster's views of the cluster: partition state from ZooKeeper,
// Metadata from the brokers, topic creation.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/zkutil"
)

// waitServing waits until broker i's Metadata answer lists itself and at
// least n brokers (its cache is filled by the controller's UpdateMetadata).
func (c *ProcCluster) waitServing(i, n int) {
	c.t.Helper()
	WaitFor(c.t, 60*time.Second, func() error {
		ids, err := c.metadataBrokers(i)
		if err != nil {
			return err
		}
		if len(ids) < n || !slices.Contains(ids, c.procs[i].ID) {
			return fmt.Errorf("broker %d lists brokers %v, want itself and %d in all", c.procs[i].ID, ids, n)
		}
		return nil
	})
}

// metadataBrokers asks broker i for Metadata and returns the broker ids it
// lists.
func (c *ProcCluster) metadataBrokers(i int) ([]int32, error) {
	cfg := SaramaConfig(sarama.V2_1_0_0)
	cfg.Net.DialTimeout = 2 * time.Second
	cfg.Net.ReadTimeout = 5 * time.Second
	b := sarama.NewBroker(c.Addr(i))
	if err := b.Open(cfg); err != nil {
		return nil, err
	}
	defer b.Close()
	resp, err := b.GetMetadata(&sarama.MetadataRequest{Version: 1, Topics: []string{}})
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, br := range resp.Brokers {
		ids = append(ids, br.ID())
	}
	return ids, nil
}

// PartitionState reads topic-partition's state znode.
func (c *ProcCluster) PartitionState(topic string, partition int32) (zkutil.PartitionState, error) {
	s, _, err := c.zk.GetPartitionState(topic, partition)
	return s, err
}

// WaitForState waits until cond accepts topic-partition's state znode,
// and returns that state.
func (c *ProcCluster) WaitForState(t testing.TB, topic string, partition int32, timeout time.Duration,
	cond func(zkutil.PartitionState) error) zkutil.PartitionState {
	t.Helper()
	var st zkutil.PartitionState
	WaitFor(t, timeout, func() error {
		s, err := c.PartitionState(topic, partition)
		if err != nil {
			return err
		}
		st = s
		return cond(s)
	})
	return st
}

// WaitForISR waits until topic-partition has a leader and exactly n ISR
// members in ZooKeeper, and returns the state.
func (c *ProcCluster) WaitForISR(t testing.TB, topic string, partition int32, n int, timeout time.Duration) zkutil.PartitionState {
	t.Helper()
	return c.WaitForState(t, topic, partition, timeout, func(s zkutil.PartitionState) error {
		if s.Leader < 0 || len(s.ISR) != n {
			return fmt.Errorf("%s-%d: leader %d ISR %v, want %d members", topic, partition, s.Leader, s.ISR, n)
		}
		return nil
	})
}

// Admin returns a Sarama ClusterAdmin on the running brokers, closed at
// cleanup.
func (c *ProcCluster) Admin(t testing.TB) sarama.ClusterAdmin {
	t.Helper()
	a, err := sarama.NewClusterAdmin(c.Addrs(), SaramaConfig(sarama.V2_1_0_0))
	if err != nil {
		t.Fatalf("brokertest: cluster admin: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// CreateTopic creates a topic (CreateTopics through Sarama) with optional
// topic configs and waits until every partition's ISR holds rf members.
func (c *ProcCluster) CreateTopic(t testing.TB, name string, partitions int32, rf int16, configs map[string]*string) {
	t.Helper()
	a := c.Admin(t)
	d := &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: rf, ConfigEntries: configs}
	if err := a.CreateTopic(name, d, false); err != nil {
		t.Fatalf("brokertest: create topic %q: %v", name, err)
	}
	for p := int32(0); p < partitions; p++ {
		c.WaitForISR(t, name, p, int(rf), 60*time.Second)
	}
}
