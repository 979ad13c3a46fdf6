package clustertest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterControllerKilledFiveTimesDuringCreations: topics are created
// while the controller is killed (and restarted) five times in a row; every
// topic ends with a live leader.
func TestClusterControllerKilledFiveTimesDuringCreations(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	var topics []string
	for round := 0; round < 5; round++ {
		ctrl := -1
		brokertest.WaitFor(t, 30*time.Second, func() error {
			if ctrl = c.Controller(); ctrl < 0 {
				return fmt.Errorf("no controller")
			}
			return nil
		})
		admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
		for i := 0; i < 3; i++ {
			name := fmt.Sprintf("r%d-t%d", round, i)
			// The creation may race the kill; retry until it is in ZooKeeper.
			brokertest.WaitFor(t, 30*time.Second, func() error {
				err := admin.CreateTopic(name, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 2}, false)
				if err != nil && err != sarama.ErrTopicAlreadyExists {
					if te, ok := err.(*sarama.TopicError); !ok || te.Err != sarama.ErrTopicAlreadyExists {
						// The admin may hold the killed controller's connection.
						admin = c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
						return err
					}
				}
				return nil
			})
			topics = append(topics, name)
			if i == 1 {
				c.Kill(ctrl)
			}
		}
		c.Restart(ctrl)
	}
	for _, name := range topics {
		for p := int32(0); p < 2; p++ {
			c.WaitForLeader(t, name, p)
		}
	}
}
