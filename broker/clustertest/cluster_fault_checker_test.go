package clustertest_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/brokertest"
)

// Fault-test checker (Jepsen's lost-write rule, docs/broker.md): a
// producer records every acknowledged (partition, offset, value); after the
// faults everything is read back from the beginning to the high watermark
// and each acknowledged value must sit at its acknowledged offset, in the
// order it was acknowledged.

// faultProps are the properties of every fault-test cluster: short session
// and lag times so each scenario stays within tens of seconds.
func faultProps(extra ...string) []brokertest.Option {
	props := map[string]string{
		"zookeeper.session.timeout.ms": "3000",
		"replica.lag.time.max.ms":      "4000",
		"min.insync.replicas":          "2",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	var opts []brokertest.Option
	for k, v := range props {
		opts = append(opts, brokertest.WithProperty(k, v))
	}
	return opts
}

// faultProducerConfig is acks=all, non-idempotent, retrying for about the
// length of an election.
func faultProducerConfig() *sarama.Config {
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = false
	cfg.Producer.Retry.Max = 60
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	cfg.Producer.Timeout = 3 * time.Second
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Net.MaxOpenRequests = 1
	// A paused broker accepts connections and never answers: only the read
	// timeout gets the client past it (for each request and metadata
	// refresh that picks it), so keep it just above Producer.Timeout.
	cfg.Net.ReadTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 60
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	return cfg
}

type ackedRecord struct {
	offset int64
	value  string
}

// ackChecker runs one SyncProducer goroutine writing "<prefix>-<n>" to
// partition 0 of a topic and records what was acknowledged and what failed.
type ackChecker struct {
	t      *testing.T
	topic  string
	prefix string

	mu     sync.Mutex
	acked  []ackedRecord
	failed map[string]error // value -> final error

	stop chan struct{}
	done chan struct{}
}

// startProducing starts the producer goroutine (bounded by maxRecords).
func startProducing(t *testing.T, addrs []string, topic, prefix string, maxRecords int) *ackChecker {
	t.Helper()
	p, err := sarama.NewSyncProducer(addrs, faultProducerConfig())
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	k := &ackChecker{t: t, topic: topic, prefix: prefix, failed: map[string]error{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		defer p.Close()
		for n := 0; n < maxRecords; n++ {
			select {
			case <-k.stop:
				return
			default:
			}
			v := fmt.Sprintf("%s-%07d", prefix, n)
			_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)})
			k.mu.Lock()
			if err != nil {
				k.failed[v] = err
			} else {
				k.acked = append(k.acked, ackedRecord{offset: off, value: v})
			}
			k.mu.Unlock()
		}
	}()
	t.Cleanup(k.halt)
	return k
}

// halt stops the producer and waits for it (the last send may take up to
// its retry budget).
func (k *ackChecker) halt() {
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
	select {
	case <-k.done:
	case <-time.After(60 * time.Second):
		k.t.Errorf("producer did not stop")
	}
}

func (k *ackChecker) ackCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.acked)
}

// waitAcks waits until at least n more records than now are acknowledged.
func (k *ackChecker) waitAcks(n int, timeout time.Duration) {
	k.t.Helper()
	want := k.ackCount() + n
	brokertest.WaitFor(k.t, timeout, func() error {
		if got := k.ackCount(); got < want {
			return fmt.Errorf("%d records acknowledged, waiting for %d (failures: %s)", got, want, k.failureSummary())
		}
		return nil
	})
}

// failures returns the final send errors by value.
func (k *ackChecker) failures() map[string]error {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]error, len(k.failed))
	for v, err := range k.failed {
		out[v] = err
	}
	return out
}

func (k *ackChecker) failureSummary() string {
	counts := map[string]int{}
	for _, err := range k.failures() {
		counts[err.Error()]++
	}
	var parts []string
	for e, n := range counts {
		parts = append(parts, fmt.Sprintf("%d× %s", n, e))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// nonRetriable returns the failures whose Kafka error is not retriable.
func (k *ackChecker) nonRetriable() []string {
	var out []string
	for v, err := range k.failures() {
		var ke sarama.KError
		if errors.As(err, &ke) && kerr.IsRetriable(kerr.ErrorForCode(int16(ke))) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %v", v, err))
	}
	sort.Strings(out)
	return out
}

// verify reads the partition back and checks every acknowledged record.
func (k *ackChecker) verify(addrs []string) map[int64]string {
	k.t.Helper()
	k.halt()
	log := readPartition(k.t, addrs, k.topic, 0)
	k.mu.Lock()
	acked := append([]ackedRecord(nil), k.acked...)
	k.mu.Unlock()
	lost := 0
	for i, a := range acked {
		if got, ok := log[a.offset]; !ok || got != a.value {
			lost++
			if lost <= 10 {
				k.t.Errorf("acknowledged %s at offset %d, read back %q (present %v)", a.value, a.offset, got, ok)
			}
		}
		if i > 0 && a.offset <= acked[i-1].offset {
			k.t.Errorf("order: %s acknowledged at %d after %s at %d", a.value, a.offset, acked[i-1].value, acked[i-1].offset)
		}
	}
	if lost > 0 {
		k.t.Errorf("%d of %d acknowledged records lost", lost, len(acked))
	}
	k.t.Logf("%s: %d acknowledged, %d failed (%s), %d records read back", k.topic, len(acked), len(k.failures()), k.failureSummary(), len(log))
	return log
}

// readPartition reads topic-partition from offset 0 up to its high
// watermark (as a consumer sees it) and returns value by offset.
func readPartition(t *testing.T, addrs []string, topic string, partition int32) map[int64]string {
	t.Helper()
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer client.Close()
	var hw int64
	brokertest.WaitFor(t, 30*time.Second, func() error {
		_ = client.RefreshMetadata(topic)
		hw, err = client.GetOffset(topic, partition, sarama.OffsetNewest)
		return err
	})
	out := map[int64]string{}
	if hw == 0 {
		return out
	}
	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, partition, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	defer pc.Close()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m := <-pc.Messages():
			out[m.Offset] = string(m.Value)
			if m.Offset >= hw-1 {
				return out
			}
		case err := <-pc.Errors():
			t.Logf("consume %s-%d: %v", topic, partition, err)
		case <-timeout:
			t.Fatalf("read %s-%d: %d records before offset %d within 60 s", topic, partition, len(out), hw)
		}
	}
}

// segmentFiles returns the .log files of topic-partition in a log dir,
// name -> contents.
func segmentFiles(t *testing.T, logDir, topic string, partition int32) (map[string][]byte, error) {
	t.Helper()
	dir := filepath.Join(logDir, fmt.Sprintf("%s-%d", topic, partition))
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out[filepath.Base(n)] = b
	}
	return out, nil
}

// waitLogsIdentical waits until every broker's segment files of
// topic-partition are byte-identical (same names, same contents) and
// non-empty.
func waitLogsIdentical(t *testing.T, c *brokertest.ProcCluster, topic string, partition int32, timeout time.Duration) {
	t.Helper()
	brokertest.WaitFor(t, timeout, func() error {
		ref, err := segmentFiles(t, c.Proc(0).Dir, topic, partition)
		if err != nil {
			return err
		}
		if len(ref) == 0 {
			return fmt.Errorf("broker %d has no segments", c.ID(0))
		}
		for i := 1; i < c.N(); i++ {
			got, err := segmentFiles(t, c.Proc(i).Dir, topic, partition)
			if err != nil {
				return err
			}
			if len(got) != len(ref) {
				return fmt.Errorf("broker %d has %d segments, broker %d %d", c.ID(i), len(got), c.ID(0), len(ref))
			}
			for name, b := range ref {
				g, ok := got[name]
				if !ok {
					return fmt.Errorf("broker %d lacks segment %s", c.ID(i), name)
				}
				if !bytes.Equal(g, b) {
					return fmt.Errorf("segment %s differs: broker %d %d bytes, broker %d %d bytes (first difference at %d)",
						name, c.ID(0), len(b), c.ID(i), len(g), firstDiff(b, g))
				}
			}
		}
		return nil
	})
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// logSize returns the total size of topic-partition's .log files in a log
// dir.
func logSize(t *testing.T, logDir, topic string, partition int32) int64 {
	t.Helper()
	files, err := segmentFiles(t, logDir, topic, partition)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, b := range files {
		n += int64(len(b))
	}
	return n
}
