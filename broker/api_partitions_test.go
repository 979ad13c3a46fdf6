package broker_test

import (
	"testing"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterCreatePartitionsAndLogDirs: CreatePartitions adds partitions
// that get leaders and take data; fewer partitions is INVALID_PARTITIONS;
// DescribeLogDirs lists the hosted replicas with their sizes.
func TestClusterCreatePartitionsAndLogDirs(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	c.CreateTopic(t, "grow", 2, 2)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	if err := admin.CreatePartitions("grow", 5, nil, false); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 5; p++ {
		c.WaitForLeader(t, "grow", p)
	}
	if err := admin.CreatePartitions("grow", 4, nil, false); err == nil {
		t.Fatal("shrinking accepted")
	}
	if err := admin.CreatePartitions("grow", 6, [][]int32{{c.Broker(0).ID(), c.Broker(1).ID()}}, false); err != nil {
		t.Fatalf("manual assignment: %v", err)
	}
	c.WaitForLeader(t, "grow", 5)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokertest.ProduceConsume(t, c, cfg, "grow", 6, 60)

	ids := []int32{c.Broker(0).ID(), c.Broker(1).ID(), c.Broker(2).ID()}
	dirs, err := admin.DescribeLogDirs(ids)
	if err != nil {
		t.Fatal(err)
	}
	replicas := 0
	var bytes int64
	for _, ds := range dirs {
		for _, d := range ds {
			if d.ErrorCode != 0 {
				t.Fatalf("dir %s: %v", d.Path, d.ErrorCode)
			}
			for _, tp := range d.Topics {
				if tp.Topic != "grow" {
					continue
				}
				for _, p := range tp.Partitions {
					replicas++
					bytes += p.Size
				}
			}
		}
	}
	if replicas != 12 || bytes == 0 {
		t.Fatalf("%d replicas of grow with %d bytes, want 12 replicas", replicas, bytes)
	}
}
