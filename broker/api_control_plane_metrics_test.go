package broker_test

import (
	"testing"

	"samsa/broker/brokertest"
)

// TestAPIControlPlaneMetrics: with control.plane.listener.name set, the
// metrics endpoint exports Kafka's ControlPlane gauges beside the data
// plane ones; after the controller's requests (UpdateMetadata at start,
// LeaderAndIsr for a new topic) went over the CONTROLLER listener, the
// first idle fraction computed (over the time since the broker started)
// is below 1, and nothing is left queued.
func TestAPIControlPlaneMetrics(t *testing.T) {
	c := brokertest.NewCluster(t, 1,
		brokertest.WithProperty("listeners", "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0"),
		brokertest.WithProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"),
		brokertest.WithProperty("control.plane.listener.name", "CONTROLLER"),
		brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	c.CreateTopic(t, "cpm", 1, 1)
	inRange := func(v float64) bool { return v >= 0 && v < 1 }
	for _, m := range []string{
		"kafka_network_socketserver_controlplanenetworkprocessoravgidlepercent",
		"kafka_server_kafkarequesthandlerpool_controlplanerequesthandleravgidlepercent",
	} {
		brokertest.WaitMetric(t, c, 0, m, inRange)
	}
	zero := func(v float64) bool { return v == 0 }
	for _, m := range []string{
		"kafka_network_requestchannel_controlplanerequestqueuesize",
		"kafka_network_requestchannel_controlplaneresponsequeuesize",
		"kafka_network_socketserver_controlplaneexpiredconnectionskilledcount",
		"kafka_network_requestchannel_requestqueuesize",
		"kafka_network_socketserver_expiredconnectionskilledcount",
	} {
		brokertest.WaitMetric(t, c, 0, m, zero)
	}
	for _, m := range []string{
		"kafka_network_socketserver_networkprocessoravgidlepercent",
		"kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
	} {
		brokertest.WaitMetric(t, c, 0, m, func(v float64) bool { return v >= 0 && v <= 1 })
	}
}
