package clustertest_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

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

// TestClusterRestartLoadsLogsWithoutRebuilding: a broker stopped cleanly
// (SIGTERM) reopens its many-segment log without rebuilding an index or
// re-reading a segment; after SIGKILL only the segments at or past the
// recovery point are recovered (Kafka's LogLoader), not the whole log.
func TestClusterRestartLoadsLogsWithoutRebuilding(t *testing.T) {
	c := brokertest.NewProcCluster(t, 1)
	segBytes := "2048"
	c.CreateTopic(t, "segs", 1, 1, map[string]*string{"segment.bytes": &segBytes})
	cfg := faultProducerConfig()
	p, err := sarama.NewSyncProducer(c.Addrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	value := sarama.ByteEncoder(make([]byte, 100))
	for i := 0; i < 200; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "segs", Partition: 0, Value: value}); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	p.Close()
	segs, err := filepath.Glob(filepath.Join(c.Proc(0).Dir, "segs-0", "*.log"))
	if err != nil || len(segs) < 8 {
		t.Fatalf("%d segments (%v), want at least 8", len(segs), err)
	}
	countSince := func(from int, msg string) int { return strings.Count(c.Log(0)[from:], msg) }

	c.Stop(0)
	from := len(c.Log(0))
	c.Start(0)
	if n := countSince(from, "rebuilding indexes"); n != 0 {
		t.Errorf("clean restart rebuilt the indexes of %d segments", n)
	}
	if n := countSince(from, "recovering segment"); n != 0 {
		t.Errorf("clean restart recovered %d segments", n)
	}
	if n := countSince(from, "no clean shutdown marker"); n != 0 {
		t.Errorf("clean restart saw no clean shutdown marker")
	}

	c.Kill(0)
	from = len(c.Log(0))
	c.StartNow(0, 60*time.Second)
	if n := countSince(from, "rebuilding indexes"); n != 0 {
		t.Errorf("restart after SIGKILL rebuilt the indexes of %d segments outside recovery", n)
	}
	// The recovery point is the log end of the clean close: only the
	// active segment holds offsets at or past it.
	if n := countSince(from, "recovering segment"); n != 1 {
		t.Errorf("restart after SIGKILL recovered %d of %d segments, want only the one past the recovery point", n, len(segs))
	}
}
