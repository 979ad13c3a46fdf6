package broker_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker"
	"samsa/broker/brokertest"
)

// scrapeMetricsBody returns broker i's whole /metrics page.
func scrapeMetricsBody(c *brokertest.Cluster, i int) (string, error) {
	addr := c.Broker(i).Addr(broker.MetricsListenerName)
	if addr == nil {
		return "", fmt.Errorf("broker %d has no metrics listener", i)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// TestClusterMetricsTopicDeletedSeriesGone: after a topic is deleted its
// per-topic BrokerTopicMetrics leave the /metrics endpoint of the broker
// that led it (Kafka's BrokerTopicStats.removeMetrics), while another
// topic's series and the all-topics totals stay.
func TestClusterMetricsTopicDeletedSeriesGone(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	for _, topic := range []string{"doomed", "stays"} {
		c.CreateTopic(t, topic, 2, 1)
		c.WaitForLeader(t, topic, 0)
		c.WaitForLeader(t, topic, 1)
	}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	p := c.SyncProducer(t, cfg)
	for _, topic := range []string{"doomed", "stays"} {
		for part := int32(0); part < 2; part++ {
			msg := &sarama.ProducerMessage{Topic: topic, Partition: part, Value: sarama.StringEncoder("m")}
			if _, _, err := p.SendMessage(msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	const (
		doomedIn = `kafka_server_brokertopicmetrics_messagesinpersec_total{topic="doomed"}`
		staysIn  = `kafka_server_brokertopicmetrics_messagesinpersec_total{topic="stays"}`
		allIn    = "kafka_server_brokertopicmetrics_messagesinpersec_total"
	)
	brokertest.WaitMetric(t, c, 0, doomedIn, func(v float64) bool { return v == 2 })
	admin := c.Admin(t, nil)
	if err := admin.DeleteTopic("doomed"); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		body, err := scrapeMetricsBody(c, 0)
		if err != nil {
			return err
		}
		if strings.Contains(body, `topic="doomed"`) {
			return fmt.Errorf("a doomed series is still exported")
		}
		return nil
	})
	if v, err := brokertest.ScrapeValue(c, 0, staysIn); err != nil || v != 2 {
		t.Fatalf("%s = %v, %v after deleting another topic", staysIn, v, err)
	}
	if v, err := brokertest.ScrapeValue(c, 0, allIn); err != nil || v != 4 {
		t.Fatalf("%s = %v, %v; the total keeps the deleted topic's messages", allIn, v, err)
	}
}
