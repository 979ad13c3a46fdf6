package replicaverify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"samsa/broker/brokertest"
	"samsa/kafka"
	"samsa/tools/internal/tooltest"
)

// rvTestBatch is a v2 batch header (61 bytes, no records) with the given
// base offset, last offset delta and CRC.
func rvTestBatch(base int64, lastDelta int32, crc uint32) []byte {
	b := make([]byte, 61)
	binary.BigEndian.PutUint64(b, uint64(base))
	binary.BigEndian.PutUint32(b[8:], 49)
	b[16] = 2
	binary.BigEndian.PutUint32(b[17:], crc)
	binary.BigEndian.PutUint32(b[23:], uint32(lastDelta))
	return b
}

// rvTestLegacy is a v1 message-set entry with the given offset and CRC.
func rvTestLegacy(offset int64, crc uint32) []byte {
	b := make([]byte, 12+22)
	binary.BigEndian.PutUint64(b, uint64(offset))
	binary.BigEndian.PutUint32(b[8:], 22)
	binary.BigEndian.PutUint32(b[12:], crc)
	b[16] = 1
	return b
}

func TestToolReplicaVerificationBatches(t *testing.T) {
	recs := append(append(rvTestBatch(0, 4, 11), rvTestLegacy(5, 22)...), rvTestBatch(6, 0, 33)[:40]...)
	got, err := rvShallowBatches(recs)
	if err != nil || len(got) != 2 || got[0] != (rvBatch{4, 5, 11}) || got[1] != (rvBatch{5, 6, 22}) {
		t.Fatalf("%+v %v", got, err)
	}
	bad := rvTestBatch(0, 0, 0)
	binary.BigEndian.PutUint32(bad[8:], 3)
	if _, err := rvShallowBatches(bad); err == nil {
		t.Error("a 3-byte batch was accepted")
	}
	bad = rvTestBatch(0, 0, 0)
	bad[16] = 7
	if _, err := rvShallowBatches(bad); err == nil {
		t.Error("magic 7 was accepted")
	}
}

func FuzzToolReplicaVerificationBatches(f *testing.F) {
	f.Add(rvTestBatch(0, 4, 11))
	f.Add(append(rvTestLegacy(5, 22), rvTestBatch(6, 2, 1)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _ := rvShallowBatches(b)
		if len(got) > len(b)/26+1 {
			t.Fatalf("%d batches from %d bytes", len(got), len(b))
		}
	})
}

func TestToolReplicaVerificationVerify(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.Local)
	clock := func() time.Time { return now }
	var out bytes.Buffer
	a, b := kafka.TopicPartition{Topic: "t", Partition: 0}, kafka.TopicPartition{Topic: "t", Partition: 1}
	buf := newRVBuffer(&out, clock, time.Second, map[kafka.TopicPartition]int64{a: 0, b: 0})
	data := func(a1, a2, b1, b2 []byte, hwA1, hwA2, hwB1, hwB2 int64) map[kafka.TopicPartition]map[int32]rvReplicaData {
		return map[kafka.TopicPartition]map[int32]rvReplicaData{
			a: {1: {hwA1, a1}, 2: {hwA2, a2}},
			b: {1: {hwB1, b1}, 2: {hwB2, b2}},
		}
	}
	two := append(rvTestBatch(0, 4, 7), rvTestBatch(5, 4, 8)...)
	// Partition a: both replicas hold offsets 0-9; b: replica 2 only 0-4.
	if err := buf.verify(data(two, two, two, rvTestBatch(0, 4, 7), 10, 10, 10, 5)); err != nil {
		t.Fatal(err)
	}
	if buf.fetchOffsets[a] != 10 || buf.fetchOffsets[b] != 5 || out.Len() != 0 {
		t.Fatalf("offsets %v, output %q", buf.fetchOffsets, out.String())
	}
	now = now.Add(2 * time.Second)
	if err := buf.verify(data(nil, nil, rvTestBatch(5, 4, 8), nil, 10, 10, 10, 5)); err != nil {
		t.Fatal(err)
	}
	if want := "2026-01-02 03:04:07,006: max lag is 5 for partition t-1 at offset 5 among 2 partitions\n"; out.String() != want {
		t.Errorf("report %q, want %q", out.String(), want)
	}
	// A checksum mismatch is printed and verification goes on.
	out.Reset()
	if err := buf.verify(data(nil, nil, rvTestBatch(5, 4, 8), rvTestBatch(5, 4, 9), 10, 10, 10, 10)); err != nil {
		t.Fatal(err)
	}
	if want := "2026-01-02 03:04:07,006: partition t-1 has unmatched checksum at offset 9; replica 1's checksum 8; replica 2's checksum 9\n"; out.String() != want {
		t.Errorf("checksum line %q, want %q", out.String(), want)
	}
	// An offset mismatch ends the run.
	out.Reset()
	buf.fetchOffsets[a] = 10
	err := buf.verify(data(rvTestBatch(10, 1, 1), rvTestBatch(10, 2, 1), nil, nil, 20, 20, 10, 10))
	var mm rvMismatch
	if !errors.As(err, &mm) || out.String() != "2026-01-02 03:04:07,006: partition t-0: replica 1's offset 11 doesn't match replica 2's offset 12\n" {
		t.Errorf("mismatch: %v %q", err, out.String())
	}
}

func TestToolReplicaVerificationArgs(t *testing.T) {
	_, errOut, code := runTool(t, "", "kafka-replica-verification", "--fetch-size", "10")
	if code != 1 || !strings.Contains(errOut, `Missing required argument "[broker-list]"`) {
		t.Errorf("exit %d %q", code, errOut)
	}
	_, errOut, code = runTool(t, "", "kafka-replica-verification", "--broker-list", "h:1", "--topic-white-list", "(")
	if code != 1 || !strings.Contains(errOut, "java.lang.RuntimeException: ( is an invalid regex.") {
		t.Errorf("exit %d %q", code, errOut)
	}
	re, _ := kafkaIncludeRegex(" 'a.*, b' ")
	if !re.MatchString("abc") || !re.MatchString("b") || re.MatchString("xb") {
		t.Errorf("include regex %v", re)
	}
}

var rvLagRe = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: max lag is (-?\d+) for partition (rv-\d) at offset (\d+) among 2 partitions$`)

func TestToolReplicaVerificationCluster(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	c.CreateTopic(t, "rv", 2, 2)
	cfg := sarama.NewConfig()
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p := c.SyncProducer(t, cfg)
	for i := 0; i < 50; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "rv", Partition: int32(i % 2), Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	c.WaitForISR(t, "rv", 0, 2)
	c.WaitForISR(t, "rv", 1, 2)
	boot := c.Addr(0) + "," + c.Addr(1)

	_, errOut, code := runTool(t, "", "kafka-replica-verification", "--broker-list", boot, "--topic-white-list", "nothing-.*")
	if code != 1 || !strings.Contains(errOut, "No topics found.") {
		t.Errorf("no topics: exit %d %q", code, errOut)
	}

	// From the log end: the replicas hold everything, so the lag is 0.
	rv := tooltest.StartTool(t, testCommands, "kafka-replica-verification", "--broker-list", boot, "--topic-white-list", "rv", "--report-interval-ms", "200", "--max-wait-ms", "100")
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if !rvLagRe.MatchString(rv.Out.String()) {
			return fmt.Errorf("no report yet: %q", rv.Out.String())
		}
		return nil
	})
	// Every broker, follower included, answers the debugging fetches: no
	// errors are reported.
	if code := rv.Stop(t); code != 0 || rv.ErrOut.String() != "" {
		t.Errorf("exit %d: %s", code, rv.ErrOut.String())
	}
	out := rv.Out.String()
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: verification process is started.\n`).MatchString(out) {
		t.Errorf("first line: %q", out)
	}
	for _, m := range rvLagRe.FindAllStringSubmatch(out, -1) {
		if m[1] != "0" || m[3] != "25" {
			t.Errorf("report %q: want max lag 0 at offset 25", m[0])
		}
	}

	// From the earliest offset: every broker answers replica-id -2 fetches
	// from its own replica, leader or follower, up to its high watermark
	// (Kafka 2.8, KIP-392), so every batch of both replicas is compared.
	rv = tooltest.StartTool(t, testCommands, "kafka-replica-verification", "--broker-list", boot, "--topic-white-list", "rv", "--report-interval-ms", "200", "--max-wait-ms", "100", "--time", "-2")
	brokertest.WaitFor(t, 30*time.Second, func() error {
		all := rvLagRe.FindAllStringSubmatch(rv.Out.String(), -1)
		if len(all) == 0 {
			return fmt.Errorf("no report yet: %q", rv.Out.String())
		}
		if last := all[len(all)-1]; last[1] != "0" || last[3] != "25" {
			return fmt.Errorf("last report %q", last[0])
		}
		return nil
	})
	if code := rv.Stop(t); code != 0 || rv.ErrOut.String() != "" || strings.Contains(rv.Out.String(), "checksum") {
		t.Errorf("exit %d\n%s\nstderr: %s", code, rv.Out.String(), rv.ErrOut.String())
	}
	t.Logf("kafka-replica-verification:\n%s", rv.Out.String())
}

// pollCondition polls cond every 50 ms until it returns nil or timeout
// passes; it returns cond's last error.
func pollCondition(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		<-tick.C
	}
}
