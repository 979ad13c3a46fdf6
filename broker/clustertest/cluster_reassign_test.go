package clustertest_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterReassignPartitions: AlterPartitionReassignments moves a
// partition to other brokers (KIP-455); the data follows, the reassignment
// is listed while it runs and the final replica set is the target.
func TestClusterReassignPartitions(t *testing.T) {
	c := brokertest.NewCluster(t, 3)
	ids := []int32{c.Broker(0).ID(), c.Broker(1).ID(), c.Broker(2).ID()}
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	createAssigned(t, admin, "mv", map[int32][]int32{0: {ids[0]}}, nil)
	c.WaitForLeader(t, "mv", 0)
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	brokertest.ProduceConsume(t, c, cfg, "mv", 1, 20)
	target := []int32{ids[1], ids[2]}
	if err := admin.AlterPartitionReassignments("mv", [][]int32{target}); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 60*time.Second, func() error {
		ps, ok := c.Broker(0).Metadata().Partition("mv", 0)
		if !ok || !slices.Equal(ps.Replicas, target) || !slices.Contains(target, ps.Leader) {
			return fmt.Errorf("partition state %+v", ps)
		}
		st, err := admin.ListPartitionReassignments("mv", []int32{0})
		if err != nil {
			return err
		}
		if len(st["mv"]) != 0 {
			return fmt.Errorf("still reassigning: %+v", st)
		}
		return nil
	})
	brokertest.ProduceConsume(t, c, cfg, "mv", 1, 10)
	if err := admin.AlterPartitionReassignments("mv", [][]int32{{99}}); err == nil {
		t.Fatal("reassignment to an unknown broker accepted")
	}
}
