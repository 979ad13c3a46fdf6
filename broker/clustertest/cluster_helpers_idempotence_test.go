package clustertest_test

import (
	"fmt"
	"testing"

	"github.com/IBM/sarama"
)

// Idempotent-producer checker (KIP-98): the ackChecker of
// cluster_fault_checker_test.go driven by a Sarama producer with
// Producer.Idempotent, and a check that every acknowledged record is in the
// log exactly once.

// startIdempotentProducing starts a goroutine that writes "<prefix>-<n>"
// (n < maxRecords) to partition 0 of topic with an idempotent Sarama
// producer: faultProducerConfig's acks=all, one request in flight and
// retries, plus Producer.Idempotent. The producer stops on halt, which
// t.Cleanup also calls.
func startIdempotentProducing(t *testing.T, addrs []string, topic, prefix string, maxRecords int) *ackChecker {
	t.Helper()
	cfg := faultProducerConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer(addrs, cfg)
	if err != nil {
		t.Fatalf("idempotent producer: %v", err)
	}
	k := &ackChecker{t: t, topic: topic, prefix: prefix, failed: map[string]error{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		defer p.Close()
		for n := 0; n < maxRecords && !k.halting(); n++ {
			v := fmt.Sprintf("%s-%07d", prefix, n)
			_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)})
			k.record(v, off, err)
		}
	}()
	t.Cleanup(k.halt)
	return k
}

// halting reports whether halt has been called.
func (k *ackChecker) halting() bool {
	select {
	case <-k.stop:
		return true
	default:
		return false
	}
}

// record notes the outcome of one send: acknowledged at off, or failed.
func (k *ackChecker) record(value string, off int64, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		k.failed[value] = err
		return
	}
	k.acked = append(k.acked, ackedRecord{offset: off, value: value})
}

// verifyExactlyOnce halts the producer, reads the partition back and checks
// KIP-98's promise: no value is in the log twice and every acknowledged
// record is at its acknowledged offset; with inOrder, also that offsets
// increase in the order the records were acknowledged.
func (k *ackChecker) verifyExactlyOnce(addrs []string, inOrder bool) map[int64]string {
	k.t.Helper()
	k.halt()
	log := readPartition(k.t, addrs, k.topic, 0)
	k.mu.Lock()
	acked := append([]ackedRecord(nil), k.acked...)
	failed := len(k.failed)
	k.mu.Unlock()
	count := map[string]int{}
	for _, v := range log {
		count[v]++
	}
	for v, n := range count {
		if n > 1 {
			k.t.Errorf("%s is in the log %d times", v, n)
		}
	}
	for i, a := range acked {
		if got := log[a.offset]; got != a.value {
			k.t.Errorf("acknowledged %s at %d, read back %q", a.value, a.offset, got)
		}
		if inOrder && i > 0 && a.offset <= acked[i-1].offset {
			k.t.Errorf("order: %s at %d after %s at %d", a.value, a.offset, acked[i-1].value, acked[i-1].offset)
		}
	}
	k.t.Logf("%d acknowledged, %d failed, %d records in the log", len(acked), failed, len(log))
	return log
}
