package clustertest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestClusterMetricsPerTopicAndIsr: the leader exports Kafka's per-topic
// BrokerTopicMetrics (MessagesInPerSec and BytesInPerSec rise after a
// produce to the topic, BytesOutPerSec after a consume, each as a topic
// label), and ReplicaManager IsrShrinksPerSec, UnderMinIsrPartitionCount
// and IsrExpandsPerSec follow a follower that stops fetching and comes
// back.
func TestClusterMetricsPerTopicAndIsr(t *testing.T) {
	c := brokertest.NewCluster(t, 2, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"),
		brokertest.WithProperty("replica.lag.time.max.ms", "1000"),
		brokertest.WithProperty("min.insync.replicas", "2"))
	c.CreateTopic(t, "per-topic", 1, 2)
	leader := c.WaitForLeader(t, "per-topic", 0)
	li := c.Index(leader)
	c.WaitForISR(t, "per-topic", 0, 2)
	const (
		msgsIn    = `kafka_server_brokertopicmetrics_messagesinpersec_total{topic="per-topic"}`
		bytesIn   = `kafka_server_brokertopicmetrics_bytesinpersec_total{topic="per-topic"}`
		bytesOut  = `kafka_server_brokertopicmetrics_bytesoutpersec_total{topic="per-topic"}`
		shrinks   = "kafka_server_replicamanager_isrshrinkspersec_total"
		expands   = "kafka_server_replicamanager_isrexpandspersec_total"
		underMin  = "kafka_server_replicamanager_underminisrpartitioncount"
		numGroups = "kafka_coordinator_group_groupmetadatamanager_numgroups"
		allMsgsIn = "kafka_server_brokertopicmetrics_messagesinpersec_total"
		replBytes = "kafka_server_brokertopicmetrics_replicationbytesoutpersec_total"
		nMessages = 10
	)
	for _, s := range []string{shrinks, expands, underMin, numGroups} {
		if v, err := brokertest.ScrapeValue(c, li, s); err != nil || v != 0 {
			t.Fatalf("%s = %v, %v before anything happened", s, v, err)
		}
	}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	p := c.SyncProducer(t, cfg)
	for i := 0; i < nMessages; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "per-topic", Value: sarama.StringEncoder("m")}); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := brokertest.ScrapeValue(c, li, msgsIn); err != nil || v != nMessages {
		t.Fatalf("%s = %v, %v after %d messages", msgsIn, v, err, nMessages)
	}
	if v, err := brokertest.ScrapeValue(c, li, bytesIn); err != nil || v <= 0 {
		t.Fatalf("%s = %v, %v", bytesIn, v, err)
	}
	if v, err := brokertest.ScrapeValue(c, li, allMsgsIn); err != nil || v < nMessages {
		t.Fatalf("%s = %v, %v", allMsgsIn, v, err)
	}
	// The follower's fetches count as replication, not as BytesOutPerSec.
	brokertest.WaitMetric(t, c, li, replBytes, func(v float64) bool { return v > 0 })
	cons, err := sarama.NewConsumer(c.Addrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition("per-topic", 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-pc.Messages():
	case <-time.After(30 * time.Second):
		t.Fatal("no message consumed")
	}
	pc.Close()
	brokertest.WaitMetric(t, c, li, bytesOut, func(v float64) bool { return v > 0 })

	// The follower's fetches stop reaching the leader and it falls behind:
	// the leader shrinks the ISR below min.insync.replicas=2.
	follower := c.Broker(1 - li).ID()
	c.Intercept(li, 1, func(req kmsg.Request) (kmsg.Response, error, bool) {
		if req.(*kmsg.FetchRequest).ReplicaID == follower {
			return nil, errors.New("brokertest: dropped follower fetch"), true
		}
		return nil, nil, false
	})
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "per-topic", Value: sarama.StringEncoder("behind")}); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitMetric(t, c, li, shrinks, func(v float64) bool { return v >= 1 })
	brokertest.WaitMetric(t, c, li, underMin, func(v float64) bool { return v == 1 })
	c.Intercept(li, 1, nil)
	brokertest.WaitMetric(t, c, li, expands, func(v float64) bool { return v >= 1 })
	brokertest.WaitMetric(t, c, li, underMin, func(v float64) bool { return v == 0 })
}
