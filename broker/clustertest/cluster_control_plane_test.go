package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterControlPlaneListener: with control.plane.listener.name=CONTROLLER
// (KIP-291) the controller's connections go to every broker's CONTROLLER
// listener, clients keep using PLAINTEXT, and a replicated topic created
// through PLAINTEXT gets its leaders and ISR (the LeaderAndIsr and
// UpdateMetadata requests travelled over CONTROLLER): its messages are
// produced and consumed. The connections are observed through each
// broker's per-listener connection-count on the Prometheus endpoint.
func TestClusterControlPlaneListener(t *testing.T) {
	c := brokertest.NewCluster(t, 2,
		brokertest.WithProperty("listeners", "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0"),
		brokertest.WithProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"),
		brokertest.WithProperty("control.plane.listener.name", "CONTROLLER"),
		brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	const ctrlConns = `kafka_server_socket_server_metrics_connection_count{listener="CONTROLLER"}`
	ctrl := c.Controller()
	other := 1 - ctrl
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if v, err := brokertest.ScrapeValue(c, other, ctrlConns); err != nil || v < 1 {
			return fmt.Errorf("broker %d: %s = %v, %v; want the controller's connection", other, ctrlConns, v, err)
		}
		return nil
	})
	c.CreateTopic(t, "cp", 2, 2)
	for p := int32(0); p < 2; p++ {
		c.WaitForISR(t, "cp", p, 2)
	}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	prod := c.SyncProducer(t, cfg)
	for i := range 10 {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "cp", Partition: int32(i % 2),
			Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	// Clients are answered with the PLAINTEXT endpoints only (Kafka answers
	// Metadata with the endpoints of the listener the request came on).
	cl := c.Sarama(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	for _, b := range cl.Brokers() {
		for i := 0; i < c.N(); i++ {
			if c.Broker(i).Addr("CONTROLLER").String() == b.Addr() {
				t.Errorf("metadata over PLAINTEXT advertises the CONTROLLER endpoint %s", b.Addr())
			}
		}
	}
	if v, err := brokertest.ScrapeValue(c, other, ctrlConns); err != nil || v < 1 {
		t.Errorf("broker %d: %s = %v, %v after the topic", other, ctrlConns, v, err)
	}
}

// TestClusterControlPlaneListenerSSL: the control plane listener's own
// security is used: with control.plane.listener.name=SSL (mutual TLS,
// ssl.client.auth=required) while brokers replicate over INTERNAL
// (SASL_SSL), the controller dials every broker's SSL listener with TLS and
// the broker keystore as its certificate; a replicated topic gets leaders
// and a full ISR only if its LeaderAndIsr requests got through.
func TestClusterControlPlaneListenerSSL(t *testing.T) {
	sc := brokertest.NewSecureCluster(t, 2,
		brokertest.WithProperty("control.plane.listener.name", "SSL"),
		brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	const sslConns = `kafka_server_socket_server_metrics_connection_count{listener="SSL"}`
	other := 1 - sc.Controller()
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if v, err := brokertest.ScrapeValue(sc.Cluster, other, sslConns); err != nil || v < 1 {
			return fmt.Errorf("broker %d: %s = %v, %v; want the controller's connection", other, sslConns, v, err)
		}
		return nil
	})
	sc.CreateTopic(t, "cps", 2, 2)
	for p := int32(0); p < 2; p++ {
		sc.WaitForISR(t, "cps", p, 2)
	}
}
