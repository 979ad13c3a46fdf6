package tooltest

// Fixtures several families' tests start: a ZooKeeper chroot with
// registered brokers, a one-broker cluster with a consumed topic, a free port.

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/zkutil"
	"samsa/zkutil/zktest"
)

// ZKCluster returns a connect string with a fresh chroot in which brokers ids
// are registered (as live brokers would be), and a client on it.
func ZKCluster(t *testing.T, ids ...int32) (string, *zkutil.Client) {
	t.Helper()
	srv := zktest.Start(t)
	connect := srv.Chroot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zkutil.Connect(ctx, zkutil.Config{Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.CreatePersistentPaths(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		reg := zkutil.BrokerRegistration{ID: id, JMXPort: -1, Timestamp: 1,
			Endpoints: []zkutil.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id}}}
		if _, err := c.RegisterBroker(reg); err != nil {
			t.Fatal(err)
		}
	}
	return connect, c
}

// GroupFixture is a one-broker cluster with topic "cg" (2 partitions):
// 3 records in partition 0, 2 in partition 1.
func GroupFixture(t *testing.T) *brokertest.Cluster {
	t.Helper()
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "cg", 2, 1)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p := c.SyncProducer(t, cfg)
	for part, n := range []int{3, 2} {
		for i := 0; i < n; i++ {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "cg", Partition: int32(part), Value: sarama.StringEncoder(fmt.Sprintf("m%d-%d", part, i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
