package broker_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
)

// TestClusterSaramaIdempotentLeaderFailover: a Sarama producer with
// Producer.Idempotent (acks=all, one request in flight, retries) writes
// while the partition leader is killed. KIP-98's guarantee: every
// acknowledged record is in the log exactly once, in order; retries of
// batches the old leader had replicated are recognised by the new leader
// (its producer state comes from follower appends) and not appended again.
func TestClusterSaramaIdempotentLeaderFailover(t *testing.T) {
	c := brokertest.NewCluster(t, 3, faultProps()...)
	c.CreateTopic(t, "idem-fo", 1, 3)
	leader := c.WaitForLeader(t, "idem-fo", 0)
	c.WaitForISR(t, "idem-fo", 0, 3)

	cfg := faultProducerConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer(c.Addrs(), cfg)
	if err != nil {
		t.Fatalf("idempotent producer: %v", err)
	}
	var (
		mu     sync.Mutex
		acked  []ackedRecord
		failed int
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer p.Close()
		for n := 0; n < 100_000; n++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("i-%07d", n)
			_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "idem-fo", Partition: 0, Value: sarama.StringEncoder(v)})
			mu.Lock()
			if err != nil {
				failed++
			} else {
				acked = append(acked, ackedRecord{offset: off, value: v})
			}
			mu.Unlock()
		}
	}()
	halt := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Errorf("producer did not stop")
		}
	}
	defer halt()
	waitAcked := func(n int) {
		mu.Lock()
		want := len(acked) + n
		mu.Unlock()
		brokertest.WaitFor(t, 60*time.Second, func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(acked) < want {
				return fmt.Errorf("%d acknowledged, waiting for %d (%d failed)", len(acked), want, failed)
			}
			return nil
		})
	}
	waitAcked(200)
	li := c.Index(leader)
	c.Kill(li)
	waitAcked(200)
	c.Restart(li)
	c.WaitForISR(t, "idem-fo", 0, 3)
	waitAcked(100)
	halt()

	log := readPartition(t, c.Addrs(), "idem-fo", 0)
	mu.Lock()
	defer mu.Unlock()
	count := map[string]int{}
	for _, v := range log {
		count[v]++
	}
	for v, n := range count {
		if n > 1 {
			t.Errorf("%s is in the log %d times", v, n)
		}
	}
	for i, a := range acked {
		if got := log[a.offset]; got != a.value {
			t.Errorf("acknowledged %s at %d, read back %q", a.value, a.offset, got)
		}
		if i > 0 && a.offset <= acked[i-1].offset {
			t.Errorf("order: %s at %d after %s at %d", a.value, a.offset, acked[i-1].value, acked[i-1].offset)
		}
	}
	t.Logf("%d acknowledged, %d failed, %d records in the log", len(acked), failed, len(log))
}

// TestClusterFaultIdempotentLeaderSigkill: as above with broker processes
// and SIGKILL, so the killed leader restarts without a clean shutdown and
// rebuilds its producer state from the snapshot of its last roll plus the
// log after it, then catches up as a follower. No acknowledged record is
// lost or duplicated, and the replicas end byte-identical.
func TestClusterFaultIdempotentLeaderSigkill(t *testing.T) {
	c := brokertest.NewProcCluster(t, 3, faultProps("log.segment.bytes", "65536")...)
	c.CreateTopic(t, "idem-kill", 1, 3, nil)
	cfg := faultProducerConfig()
	cfg.Producer.Idempotent = true
	p, err := sarama.NewSyncProducer(c.Addrs(), cfg)
	if err != nil {
		t.Fatalf("idempotent producer: %v", err)
	}
	var (
		mu    sync.Mutex
		acked []ackedRecord
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer p.Close()
		for n := 0; n < 1_000_000; n++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("k-%07d", n)
			_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "idem-kill", Partition: 0, Value: sarama.StringEncoder(v)})
			if err == nil {
				mu.Lock()
				acked = append(acked, ackedRecord{offset: off, value: v})
				mu.Unlock()
			}
		}
	}()
	halted := false
	halt := func() {
		if halted {
			return
		}
		halted = true
		close(stop)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Errorf("producer did not stop")
		}
	}
	defer halt()
	waitAcked := func(n int) {
		mu.Lock()
		want := len(acked) + n
		mu.Unlock()
		brokertest.WaitFor(t, 60*time.Second, func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(acked) < want {
				return fmt.Errorf("%d acknowledged, waiting for %d", len(acked), want)
			}
			return nil
		})
	}
	waitAcked(300)
	li := leaderIndex(t, c, "idem-kill")
	c.Kill(li)
	waitNewLeader(t, c, "idem-kill", c.ID(li))
	waitAcked(300)
	c.Start(li)
	c.WaitForISR(t, "idem-kill", 0, 3, 60*time.Second)
	waitAcked(300)
	halt()

	log := readPartition(t, c.Addrs(), "idem-kill", 0)
	mu.Lock()
	defer mu.Unlock()
	count := map[string]int{}
	for _, v := range log {
		count[v]++
	}
	for v, n := range count {
		if n > 1 {
			t.Errorf("%s is in the log %d times", v, n)
		}
	}
	for _, a := range acked {
		if got := log[a.offset]; got != a.value {
			t.Errorf("acknowledged %s at %d, read back %q", a.value, a.offset, got)
		}
	}
	t.Logf("%d acknowledged, %d records in the log", len(acked), len(log))
	waitLogsIdentical(t, c, "idem-kill", 0, 60*time.Second)
}
