package broker_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
)

// edgeBatch builds a one-record batch v2 with codec.
func edgeBatch(t *testing.T, codec record.Codec) []byte {
	t.Helper()
	b, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()), []record.Record{{Value: []byte("value")}}, codec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edgeProduce sends one Produce request with a partition per entry of
// parts (in order, all in their own topic entry) and returns the error
// code of each.
func edgeProduce(t *testing.T, rc *brokertest.RawConn, version, acks int16, parts []edgePart) []int16 {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	req.Acks = acks
	req.TimeoutMillis = 5000
	for _, p := range parts {
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = p.topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p.partition
		rp.Records = p.records
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kr.(*kmsg.ProduceResponse)
	var codes []int16
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			codes = append(codes, rp.ErrorCode)
			if rp.ErrorCode != 0 && rp.BaseOffset != -1 {
				t.Errorf("%s-%d: error %d with base offset %d, want -1", rt.Topic, rp.Partition, rp.ErrorCode, rp.BaseOffset)
			}
		}
	}
	if len(codes) != len(parts) {
		t.Fatalf("%d partitions answered, want %d", len(codes), len(parts))
	}
	return codes
}

type edgePart struct {
	name      string
	topic     string
	partition int32
	records   []byte
}

// TestAPIEdgeProduceInvalidAcks: Kafka 2.8 KafkaApis.handleProduceRequest
// answers UNKNOWN_TOPIC_OR_PARTITION for partitions missing from the
// metadata cache and the ProduceRequest.validateRecords error (v3+: at
// least one and exactly one batch, magic 2, no zstd below v7, a batch size
// of at least 14) before ReplicaManager.appendRecords sees the acks; there
// "If required.acks is outside accepted range, something is wrong with the
// client. Just return an error and don't handle the request at all":
// every other partition gets INVALID_REQUIRED_ACKS, whatever its batch
// holds (bad CRC, not hosted here, internal topic), nothing is appended
// and FailedProduceRequestsPerSec is not marked.
func TestAPIEdgeProduceInvalidAcks(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	c.CreateTopic(t, "p", 2, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))

	good := edgeBatch(t, record.CodecNone)
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 0xff
	twoBatches := append(append([]byte(nil), good...), good...)
	magic1 := append([]byte(nil), good...)
	magic1[16] = 1
	tinySize := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(tinySize[8:], 3)
	badMagic := append([]byte(nil), good...)
	badMagic[16] = 7
	truncated := append([]byte(nil), good[:len(good)-5]...)
	zstd := edgeBatch(t, record.CodecZstd)

	for _, acks := range []int16{2, -2, 100} {
		parts := []edgePart{
			{"bad crc", "p", 0, badCRC},
			{"good batch", "p", 1, good},
			{"unknown topic", "nope", 0, badCRC},
			{"unknown partition", "p", 9, good},
			{"two batches", "p", 0, twoBatches},
			{"magic 1 in v8", "p", 0, magic1},
			{"size below 14", "p", 0, tinySize},
			{"magic 7", "p", 0, badMagic},
			{"no complete batch", "p", 0, truncated},
			{"empty", "p", 0, []byte{}},
			{"zstd in v8", "p", 1, zstd},
		}
		want := []int16{
			kerr.InvalidRequiredAcks.Code,
			kerr.InvalidRequiredAcks.Code,
			kerr.UnknownTopicOrPartition.Code,
			kerr.UnknownTopicOrPartition.Code,
			kerr.InvalidRecord.Code,
			kerr.InvalidRecord.Code,
			kerr.CorruptMessage.Code,
			kerr.CorruptMessage.Code,
			kerr.InvalidRecord.Code,
			kerr.InvalidRecord.Code,
			kerr.InvalidRequiredAcks.Code,
		}
		got := edgeProduce(t, rc, 8, acks, parts)
		for i := range parts {
			if got[i] != want[i] {
				t.Errorf("acks=%d %s: code %d (%s), want %d (%s)", acks, parts[i].name,
					got[i], kerr.ErrorForCode(got[i]), want[i], kerr.ErrorForCode(want[i]))
			}
		}
	}

	// zstd below produce v7 is validateRecords' UNSUPPORTED_COMPRESSION_TYPE;
	// v0-2 carry message sets, which validateRecords does not look at.
	if got := edgeProduce(t, rc, 5, 2, []edgePart{{"zstd in v5", "p", 0, zstd}}); got[0] != kerr.UnsupportedCompressionType.Code {
		t.Errorf("zstd in v5 with acks=2: code %d, want UNSUPPORTED_COMPRESSION_TYPE", got[0])
	}
	if got := edgeProduce(t, rc, 2, 2, []edgePart{{"garbage in v2", "p", 0, []byte{1, 2, 3}}}); got[0] != kerr.InvalidRequiredAcks.Code {
		t.Errorf("garbage message set in v2 with acks=2: code %d, want INVALID_REQUIRED_ACKS", got[0])
	}

	// ReplicaManager.appendRecords refuses before appendToLocalLog, the
	// only place Kafka marks FailedProduceRequestsPerSec.
	const failed = "kafka_server_brokertopicmetrics_failedproducerequestspersec_total"
	if v, err := brokertest.ScrapeValue(c, 0, failed); err != nil || v != 0 {
		t.Errorf("%s = %v, %v after refused requests, want 0", failed, v, err)
	}

	// Nothing was appended: the next good batch gets offset 0 on both
	// partitions.
	for _, p := range []int32{0, 1} {
		kr, err := rc.RoundTrip(brokertest.ProduceRequest(8, 1, 5000, "p", p, append([]byte(nil), good...)))
		if err != nil {
			t.Fatal(err)
		}
		got := kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if got.ErrorCode != 0 || got.BaseOffset != 0 {
			t.Errorf("p-%d after the refused requests: code %d base offset %d, want 0 and 0", p, got.ErrorCode, got.BaseOffset)
		}
	}
}

// TestAPIEdgeProduceDuplicateMetrics pins Kafka 2.8's accounting of an
// idempotent producer's retried batch: Log.append answers the duplicate
// with the original batch's offsets (LogAppendInfo.numMessages is then the
// original's record count) and ReplicaManager.appendToLocalLog marks
// bytesInRate with the request's records.sizeInBytes and messagesInRate
// with numMessages, per topic and in total, whether or not anything was
// appended. So a duplicate counts again, as in Kafka.
func TestAPIEdgeProduceDuplicateMetrics(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	c.CreateTopic(t, "dup", 1, 1)
	c.WaitForLeader(t, "dup", 0)
	rc := brokertest.DialRaw(t, c.Addr(0))
	pid := initProducerID(t, rc, 4, -1, -1).ProducerID
	batch := idemRecords(t, pid, 0, 0, 3)
	for i := 0; i < 2; i++ {
		if code, off := produceRaw(t, rc, "dup", append([]byte(nil), batch...)); code != 0 || off != 0 {
			t.Fatalf("produce %d: error %d offset %d, want 0 and 0", i, code, off)
		}
	}
	if leo := listEndOffset(t, rc, "dup"); leo != 3 {
		t.Fatalf("log end offset %d, want 3 (the retry appended nothing)", leo)
	}
	for name, want := range map[string]float64{
		`kafka_server_brokertopicmetrics_messagesinpersec_total{topic="dup"}`: 6,
		`kafka_server_brokertopicmetrics_bytesinpersec_total{topic="dup"}`:    float64(2 * len(batch)),
		`kafka_server_brokertopicmetrics_messagesinpersec_total`:              6,
		`kafka_server_brokertopicmetrics_bytesinpersec_total`:                 float64(2 * len(batch)),
	} {
		brokertest.WaitMetric(t, c, 0, name, func(v float64) bool { return v == want })
	}
}

// TestAPIEdgeProduceFailedMeter: Kafka 2.8 marks FailedProduceRequestsPerSec
// only in ReplicaManager.appendToLocalLog, and there not for the failures
// it expects ("Failed produce requests metric is not incremented for known
// exceptions": UnknownTopicOrPartition, NotLeaderOrFollower,
// RecordTooLarge, RecordBatchTooLarge, CorruptRecord, KafkaStorage); the
// checks of KafkaApis (unknown topics, ProduceRequest.validateRecords)
// never reach it. Producer-state errors (here UNKNOWN_PRODUCER_ID) are
// marked, per topic and in total.
func TestAPIEdgeProduceFailedMeter(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	c.CreateTopic(t, "f", 1, 1)
	c.WaitForLeader(t, "f", 0)
	rc := brokertest.DialRaw(t, c.Addr(0))
	good := edgeBatch(t, record.CodecNone)
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 0xff
	parts := []edgePart{
		{"unknown partition", "f", 9, good},
		{"unknown topic", "nope", 0, good},
		{"bad crc", "f", 0, badCRC},
		{"two batches", "f", 0, append(append([]byte(nil), good...), good...)},
	}
	want := []int16{kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.CorruptMessage.Code, kerr.InvalidRecord.Code}
	got := edgeProduce(t, rc, 8, 1, parts)
	for i := range parts {
		if got[i] != want[i] {
			t.Errorf("%s: code %d, want %d", parts[i].name, got[i], want[i])
		}
	}
	const (
		total    = "kafka_server_brokertopicmetrics_failedproducerequestspersec_total"
		perTopic = `kafka_server_brokertopicmetrics_failedproducerequestspersec_total{topic="f"}`
	)
	if v, err := brokertest.ScrapeValue(c, 0, total); err != nil || v != 0 {
		t.Fatalf("%s = %v, %v after expected failures, want 0", total, v, err)
	}
	pid := initProducerID(t, rc, 4, -1, -1).ProducerID
	if code, _ := produceRaw(t, rc, "f", idemRecords(t, pid, 0, 7, 1)); code != kerr.UnknownProducerID.Code {
		t.Fatalf("unknown producer at sequence 7: code %d, want UNKNOWN_PRODUCER_ID", code)
	}
	for _, name := range []string{total, perTopic} {
		if v, err := brokertest.ScrapeValue(c, 0, name); err != nil || v != 1 {
			t.Errorf("%s = %v, %v after UNKNOWN_PRODUCER_ID, want 1", name, v, err)
		}
	}
}
