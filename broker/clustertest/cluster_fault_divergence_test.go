package clustertest_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// TestClusterFaultOldLeaderTruncated (g, KIP-101): the leader appends
// batches its followers never get (both followers paused), is then cut off
// (paused past its ZooKeeper session) while a follower takes over and
// writes other records at those offsets. When the old leader returns it
// must truncate its unreplicated tail by leader epoch: nothing it held
// alone is acknowledged or survives, nothing acknowledged is lost, and all
// three replicas end with byte-identical segments.
func TestClusterFaultOldLeaderTruncated(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps("zookeeper.session.timeout.ms", "2000", "replica.lag.time.max.ms", "10000")...)
	c.CreateTopic(t, "fg", 1, 3, nil)
	k1 := startProducing(t, c.Addrs(), "fg", "before", 300)
	k1.waitAcks(300, 30*time.Second)
	k1.halt()
	li, fa := followerIndex(t, c, "fg")
	fb := 3 - li - fa
	c.WaitForISR(t, "fg", 0, 3, 30*time.Second)
	oldLeader := c.ID(li)

	// The orphan batches: appended by the leader alone. A follower may have
	// a fetch parked at the leader when it is paused; an acks=1 sentinel
	// answers it, so the followers (paused) cannot fetch what follows.
	c.Pause(fa)
	c.Pause(fb)
	orphans, orphanErr := sendOrphans(t, c, li)
	// Cut the leader off; the followers carry on without the orphans.
	c.Pause(li)
	cutOff, err := segmentFiles(t, c.Proc(li).Dir, "fg", 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Resume(fa)
	c.Resume(fb)
	st := waitNewLeader(t, c, "fg", oldLeader)
	if slices.Contains(st.ISR, oldLeader) {
		t.Errorf("new ISR %v still holds the cut-off leader %d", st.ISR, oldLeader)
	}
	k2 := startProducing(t, []string{c.Addr(fa), c.Addr(fb)}, "fg", "after", 1_000_000)
	k2.waitAcks(200, 30*time.Second)

	c.Resume(li)
	c.WaitForState(t, "fg", 0, 30*time.Second, func(s zkutil.PartitionState) error {
		if len(s.ISR) != 3 {
			return fmt.Errorf("ISR %v", s.ISR)
		}
		return nil
	})
	k2.waitAcks(100, 30*time.Second)
	k2.halt()
	failed := waitOrphans(t, orphanErr, len(orphans))
	waitLogsIdentical(t, c, "fg", 0, 30*time.Second)
	log := k1.verify(c.Addrs())
	k2.verify(c.Addrs())
	missing := checkOrphans(t, log, orphans, failed)
	checkTruncated(t, c, li, cutOff, missing)
}

// sendOrphans appends batches to leader li alone (both followers are
// paused): an acks=1 sentinel first answers a fetch a follower may have
// parked at the leader, then 20 orphan records are sent with acks=all
// and no retries; it returns once the leader's log has grown, with the
// records and where the send's result will arrive.
func sendOrphans(t *testing.T, c *brokertest.ProcCluster, li int) ([]*sarama.ProducerMessage, <-chan error) {
	t.Helper()
	scfg := faultProducerConfig()
	scfg.Producer.RequiredAcks = sarama.WaitForLocal
	sp, err := sarama.NewSyncProducer([]string{c.Addr(li)}, scfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sp.SendMessage(&sarama.ProducerMessage{Topic: "fg", Partition: 0, Value: sarama.StringEncoder("sentinel")}); err != nil {
		t.Fatalf("sentinel: %v", err)
	}
	sp.Close()
	size0 := logSize(t, c.Proc(li).Dir, "fg", 0)
	cfg := faultProducerConfig()
	cfg.Producer.Retry.Max = 0
	cfg.Producer.Timeout = 20 * time.Second
	cfg.Net.ReadTimeout = 30 * time.Second
	op, err := sarama.NewSyncProducer([]string{c.Addr(li)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var orphans []*sarama.ProducerMessage
	for n := 0; n < 20; n++ {
		orphans = append(orphans, &sarama.ProducerMessage{Topic: "fg", Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("orphan-%d", n))})
	}
	orphanErr := make(chan error, 1)
	go func() {
		defer op.Close()
		orphanErr <- op.SendMessages(orphans)
	}()
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if n := logSize(t, c.Proc(li).Dir, "fg", 0); n <= size0 {
			return fmt.Errorf("leader's log still %d bytes", n)
		}
		return nil
	})
	return orphans, orphanErr
}

// waitOrphans waits for the orphan send's result: the values that failed.
func waitOrphans(t *testing.T, orphanErr <-chan error, n int) map[string]bool {
	t.Helper()
	failed := map[string]bool{}
	select {
	case err := <-orphanErr:
		var perrs sarama.ProducerErrors
		if errors.As(err, &perrs) {
			for _, pe := range perrs {
				v, _ := pe.Msg.Value.Encode()
				failed[string(v)] = true
			}
		}
		t.Logf("orphan batches: %d of %d failed (%v)", len(failed), n, err)
	case <-time.After(60 * time.Second):
		t.Fatal("orphan producer did not return")
	}
	return failed
}

// checkOrphans checks every orphan against the final log: each
// acknowledged one is at its offset; it returns how many are gone.
func checkOrphans(t *testing.T, log map[int64]string, orphans []*sarama.ProducerMessage, failed map[string]bool) int {
	t.Helper()
	present := map[string]int64{}
	for off, v := range log {
		present[v] = off
	}
	missing := 0
	for _, m := range orphans {
		b, _ := m.Value.Encode()
		v := string(b)
		off, ok := present[v]
		if !ok {
			missing++
		}
		switch {
		case failed[v] && ok:
			// Possible only if a follower fetched it before the cut.
			t.Logf("unacknowledged %s survived at offset %d", v, off)
		case !failed[v] && !ok:
			t.Errorf("acknowledged %s (offset %d) is lost", v, m.Offset)
		case !failed[v] && off != m.Offset:
			t.Errorf("acknowledged %s at offset %d, found at %d", v, m.Offset, off)
		}
	}
	return missing
}

// checkTruncated: the cut-off leader li's log (cutOff when it was cut off)
// must have been rewritten below its old end if an orphan is missing.
func checkTruncated(t *testing.T, c *brokertest.ProcCluster, li int, cutOff map[string][]byte, missing int) {
	t.Helper()
	final, err := segmentFiles(t, c.Proc(li).Dir, "fg", 0)
	if err != nil {
		t.Fatal(err)
	}
	diverged := false
	for name, old := range cutOff {
		if !bytes.HasPrefix(final[name], old) {
			diverged = true
		}
	}
	switch {
	case missing > 0 && !diverged:
		t.Errorf("the old leader's log was not truncated: its unreplicated tail is still a prefix of the final log")
	case missing == 0:
		// Under heavy load a follower's parked fetch can be answered after
		// the orphans were appended: then they were replicated, the
		// scenario degenerates to a plain failover, and only the checks
		// above apply.
		t.Logf("note: every orphan reached a follower before the cut; no truncation to check this run")
	}
}
