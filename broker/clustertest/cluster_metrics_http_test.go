package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterMetricsEndpoint: metrics.listener serves the broker's registry
// in Prometheus format; MessagesInPerSec rises after a produce and
// UnderReplicatedPartitions is above zero while a follower is down.
func TestClusterMetricsEndpoint(t *testing.T) {
	c := brokertest.NewCluster(t, 2, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"),
		brokertest.WithProperty("replica.lag.time.max.ms", "1000"))
	c.CreateTopic(t, "metered", 1, 2)
	leader := c.Index(c.WaitForLeader(t, "metered", 0))
	c.WaitForISR(t, "metered", 0, 2)
	const in = "kafka_server_brokertopicmetrics_messagesinpersec_total"
	const urp = "kafka_server_replicamanager_underreplicatedpartitions"
	before, err := brokertest.ScrapeValue(c, leader, in)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := brokertest.ScrapeValue(c, leader, urp); err != nil || v != 0 {
		t.Fatalf("%s = %v, %v before the follower stops", urp, v, err)
	}
	if _, err := brokertest.ScrapeValue(c, leader, "kafka_controller_kafkacontroller_activecontrollercount"); err != nil {
		t.Fatal(err)
	}
	p := c.SyncProducer(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	for i := 0; i < 10; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "metered", Value: sarama.StringEncoder("m")}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := brokertest.ScrapeValue(c, leader, in)
	if err != nil {
		t.Fatal(err)
	}
	if after < before+10 {
		t.Fatalf("%s went from %v to %v after 10 messages", in, before, after)
	}
	c.Kill(1 - leader)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		v, err := brokertest.ScrapeValue(c, leader, urp)
		if err == nil && v < 1 {
			err = fmt.Errorf("%s = %v", urp, v)
		}
		return err
	})
}
