package broker_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker"
	"samsa/broker/brokertest"
)

// scrapeValue reads one sample (metric name with labels, as printed) from
// broker i's metrics.listener endpoint.
func scrapeValue(c *brokertest.Cluster, i int, sample string) (float64, error) {
	addr := c.Broker(i).Addr(broker.MetricsListenerName)
	if addr == nil {
		return 0, fmt.Errorf("broker %d has no metrics listener", i)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0, fmt.Errorf("no %s in:\n%s", sample, body)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

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
	before, err := scrapeValue(c, leader, in)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := scrapeValue(c, leader, urp); err != nil || v != 0 {
		t.Fatalf("%s = %v, %v before the follower stops", urp, v, err)
	}
	if _, err := scrapeValue(c, leader, "kafka_controller_kafkacontroller_activecontrollercount"); err != nil {
		t.Fatal(err)
	}
	p := c.SyncProducer(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	for i := 0; i < 10; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "metered", Value: sarama.StringEncoder("m")}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := scrapeValue(c, leader, in)
	if err != nil {
		t.Fatal(err)
	}
	if after < before+10 {
		t.Fatalf("%s went from %v to %v after 10 messages", in, before, after)
	}
	c.Kill(1 - leader)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		v, err := scrapeValue(c, leader, urp)
		if err == nil && v < 1 {
			err = fmt.Errorf("%s = %v", urp, v)
		}
		return err
	})
}
