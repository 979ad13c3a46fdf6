package brokertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// SaramaConfig returns a Sarama config suited to tests: version v, short
// retries and timeouts, client id "brokertest".
func SaramaConfig(v sarama.KafkaVersion) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = v
	cfg.ClientID = "brokertest"
	cfg.Metadata.Retry.Max = 20
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	cfg.Producer.Retry.Max = 20
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Retry.Backoff = 100 * time.Millisecond
	cfg.Admin.Timeout = 30 * time.Second
	cfg.Net.DialTimeout = 5 * time.Second
	return cfg
}

// SaramaTxnConfig returns a config for Sarama's transactional producer
// with transactional id id: v2.8, idempotent, acks=all, one request in
// flight, and retries (200, 50 ms apart) that outlast a coordinator
// loading its partition.
func SaramaTxnConfig(id string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Transaction.ID = id
	cfg.Producer.Transaction.Retry.Max = 200
	cfg.Producer.Transaction.Retry.Backoff = 50 * time.Millisecond
	cfg.Net.MaxOpenRequests = 1
	return cfg
}

// Sarama returns a Sarama client of the cluster, closed at cleanup. A nil
// cfg means SaramaConfig(sarama.V2_1_0_0).
func (c *Cluster) Sarama(t testing.TB, cfg *sarama.Config) sarama.Client {
	t.Helper()
	if cfg == nil {
		cfg = SaramaConfig(sarama.V2_1_0_0)
	}
	cl, err := sarama.NewClient(c.Addrs(), cfg)
	if err != nil {
		t.Fatalf("brokertest: sarama client: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// SyncProducer returns a Sarama SyncProducer, closed at cleanup.
func (c *Cluster) SyncProducer(t testing.TB, cfg *sarama.Config) sarama.SyncProducer {
	t.Helper()
	if cfg == nil {
		cfg = SaramaConfig(sarama.V2_1_0_0)
	}
	p, err := sarama.NewSyncProducer(c.Addrs(), cfg)
	if err != nil {
		t.Fatalf("brokertest: sync producer: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Admin returns a Sarama ClusterAdmin, closed at cleanup.
func (c *Cluster) Admin(t testing.TB, cfg *sarama.Config) sarama.ClusterAdmin {
	t.Helper()
	if cfg == nil {
		cfg = SaramaConfig(sarama.V2_1_0_0)
	}
	a, err := sarama.NewClusterAdmin(c.Addrs(), cfg)
	if err != nil {
		t.Fatalf("brokertest: cluster admin: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// CreateTopic creates a topic through the CreateTopics API (Sarama's
// ClusterAdmin) and waits until every running broker knows a leader for
// each partition.
func (c *Cluster) CreateTopic(t testing.TB, name string, partitions int32, rf int16, configs ...map[string]*string) {
	t.Helper()
	a := c.Admin(t, nil)
	d := &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: rf}
	if len(configs) > 0 {
		d.ConfigEntries = configs[0]
	}
	if err := a.CreateTopic(name, d, false); err != nil {
		t.Fatalf("brokertest: create topic %q: %v", name, err)
	}
	for p := int32(0); p < partitions; p++ {
		c.WaitForLeader(t, name, p)
	}
}

// WaitForLeader waits until every running broker's metadata cache shows a
// live leader for topic-partition, and returns the leader's id.
func (c *Cluster) WaitForLeader(t testing.TB, topic string, partition int32) int32 {
	t.Helper()
	var leader int32 = -1
	WaitFor(t, 60*time.Second, func() error {
		leader = -1
		for i := 0; i < c.N(); i++ {
			b := c.Broker(i)
			if b == nil {
				continue
			}
			snap := b.Metadata()
			ps, ok := snap.Partition(topic, partition)
			if !ok || ps.Leader < 0 || !snap.Alive(ps.Leader) {
				return fmt.Errorf("broker %d: no live leader for %s-%d", b.ID(), topic, partition)
			}
			if leader != -1 && leader != ps.Leader {
				return fmt.Errorf("brokers disagree about the leader of %s-%d", topic, partition)
			}
			leader = ps.Leader
		}
		return nil
	})
	return leader
}

// WaitForISR waits until the leader of topic-partition reports n ISR
// members in the metadata of every running broker.
func (c *Cluster) WaitForISR(t testing.TB, topic string, partition int32, n int) {
	t.Helper()
	WaitFor(t, 60*time.Second, func() error {
		for i := 0; i < c.N(); i++ {
			b := c.Broker(i)
			if b == nil {
				continue
			}
			ps, ok := b.Metadata().Partition(topic, partition)
			if !ok || len(ps.ISR) != n {
				return fmt.Errorf("broker %d: ISR of %s-%d is %v, want %d members", b.ID(), topic, partition, ps.ISR, n)
			}
		}
		return nil
	})
}
