package broker_test

import (
	"strings"
	"testing"
	"time"

	"samsa/broker/brokertest"
)

// TestClusterRestartAfterKillNeedsNoSecondTry: a SIGKILLed broker started
// again at once finds its old /brokers/ids/<id> still held by the dead
// process's session, waits (logged) for that session to expire and then
// registers, in one start. Kafka 2.8 exits with "node already exists" and
// needs a second start. The broker rejoins the ISR of its partition.
func TestClusterRestartAfterKillNeedsNoSecondTry(t *testing.T) {
	c := brokertest.NewProcCluster(t, 2)
	createTopicOn(t, c, "restart", []int32{c.ID(0), c.ID(1)})
	c.WaitForISR(t, "restart", 0, 2, 30*time.Second)
	c.Kill(1)
	oldEpoch, newEpoch := c.StartNow(1, 60*time.Second)
	if oldEpoch == 0 {
		t.Fatalf("the old registration was gone before the restart; the test proves nothing")
	}
	if newEpoch == oldEpoch {
		t.Fatalf("broker epoch unchanged (%d)", newEpoch)
	}
	log := c.Log(1)
	if !strings.Contains(log, "waiting for that session to expire") || !strings.Contains(log, "our previous process") {
		t.Errorf("the wait for the old registration was not logged as our previous process's:\n%s", log[max(0, len(log)-4000):])
	}
	if strings.Count(log, "==== brokertest: starting broker") != 2 {
		t.Errorf("broker was started more than twice")
	}
	c.WaitForISR(t, "restart", 0, 2, 60*time.Second)
}
