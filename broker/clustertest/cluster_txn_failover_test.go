package clustertest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// brokerIndexer is a cluster of either kind (brokertest.Cluster or
// ProcCluster): a broker id's index, -1 for none.
type brokerIndexer interface{ Index(id int32) int }

// txnCoordinatorIndex returns the cluster index of id's coordinator,
// waiting until it is a running broker other than not (-1: any).
func txnCoordinatorIndex(t *testing.T, c brokerIndexer, cl *kgo.Client, id string, not int) int {
	t.Helper()
	idx := -1
	txnWait(t, 30*time.Second, "a transaction coordinator for "+id, func() (bool, string) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKey = 1, id
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		if resp.ErrorCode != 0 {
			return false, "code " + itoa(resp.ErrorCode)
		}
		idx = c.Index(resp.NodeID)
		return idx >= 0 && idx != not, "coordinator is node " + itoa(int16(resp.NodeID))
	})
	return idx
}

func itoa(v int16) string { return strconv.Itoa(int(v)) }

// TestClusterTxnCoordinatorFailover: the coordinator's broker is killed
// while a transaction is open; the new leader of the id's
// __transaction_state partition loads it (Ongoing, same producer id and
// epoch) and the producer's commit completes there.
func TestClusterTxnCoordinatorFailover(t *testing.T) {
	c := txnCluster(t, 3,
		brokertest.WithProperty("transaction.state.log.replication.factor", "3"),
		brokertest.WithProperty("transaction.state.log.min.isr", "2"))
	c.CreateTopic(t, "txn-fo", 1, 3)
	c.WaitForISR(t, "txn-fo", 0, 3)
	adm := adminClient(t, c)
	const id = "fo-1"
	coord := txnCoordinatorIndex(t, c, adm, id, -1)
	for p := int32(0); p < 3; p++ {
		c.WaitForISR(t, "__transaction_state", p, 3)
	}
	cl := txnClient(t, c, id, "txn-fo", kgo.TransactionTimeout(60*time.Second))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, 0, "before-failover")
	before := waitTxnState(t, adm, id, "Ongoing")
	c.Kill(coord)
	adm = adminClient(t, c) // kgo keeps a dead coordinator cached for a while
	txnCoordinatorIndex(t, c, adm, id, coord)
	after := waitTxnState(t, adm, id, "Ongoing")
	if after.ProducerID != before.ProducerID || after.ProducerEpoch != before.ProducerEpoch || len(after.Topics) != 1 {
		t.Fatalf("after failover: %+v, before %+v", after, before)
	}
	txnCoordinatorIndex(t, c, adm, id, coord)
	produceTxn(t, cl, 0, "after-failover")
	if err := endTxn(cl, kgo.TryCommit); err != nil {
		t.Fatalf("commit after failover: %v", err)
	}
	waitTxnState(t, adm, id, "CompleteCommit")
}
