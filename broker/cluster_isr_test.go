package broker_test

import (
	"testing"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterIsrShrinksAndExpands: Kafka's ISR rules (replica.lag.time.max.ms):
// a follower that stops fetching leaves the ISR so acks=all produces go on
// (with min.insync.replicas=1), and it rejoins once restarted and caught up
// to the high watermark.
func TestClusterIsrShrinksAndExpands(t *testing.T) {
	c := brokertest.NewCluster(t, 3, brokertest.WithProperty("replica.lag.time.max.ms", "1000"))
	c.CreateTopic(t, "isr", 1, 3)
	leader := c.WaitForLeader(t, "isr", 0)
	victim := -1
	for i := 0; i < 3; i++ {
		if c.Broker(i).ID() != leader && c.Broker(i).ID() != c.Broker(c.Controller()).ID() {
			victim = i
		}
	}
	if victim < 0 {
		// The leader is the controller's broker; any follower will do.
		for i := 0; i < 3; i++ {
			if c.Broker(i).ID() != leader {
				victim = i
			}
		}
	}
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	produceConsume(t, c, cfg, "isr", 1, 10)
	c.Kill(victim)
	c.WaitForISR(t, "isr", 0, 2)
	produceConsume(t, c, cfg, "isr", 1, 10)
	c.Restart(victim)
	c.WaitForISR(t, "isr", 0, 3)
}
