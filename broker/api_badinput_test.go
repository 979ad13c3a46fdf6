package broker_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/record"
	"samsa/broker/wire"
)

// stillServes checks that a fresh connection gets an ApiVersions answer.
func stillServes(t *testing.T, addr string) {
	t.Helper()
	rc := brokertest.DialRaw(t, addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(0)
	if _, err := rc.RoundTrip(req); err != nil {
		t.Fatalf("broker stopped serving: %v", err)
	}
}

func frameWith(size int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(size))
	return append(b, body...)
}

// TestAPIBadInputClosesConnection: malformed frames close the offending
// connection (as Kafka does) and the broker keeps serving others.
func TestAPIBadInputClosesConnection(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	addr := c.Addr(0)
	id := "x"
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(1)
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("a")}}
	full := wire.AppendRequest(nil, meta, 1, &id)

	// An array count far beyond the frame: Metadata v1 with 2^31-1 topics.
	huge := append([]byte(nil), full[4:]...)
	hdrLen := 2 + 2 + 4 + 2 + len(id)
	binary.BigEndian.PutUint32(huge[hdrLen:], 0x7fffffff)

	unknown := wire.AppendRequest(nil, meta, 1, &id)
	binary.BigEndian.PutUint16(unknown[4:], 999) // api key 999

	cases := map[string][]byte{
		"oversized frame":    frameWith(200<<20, nil),
		"negative length":    frameWith(-5, nil),
		"unknown api key":    unknown,
		"truncated body":     frameWith(int32(len(full)-4-3), full[4:len(full)-3]),
		"array count beyond": frameWith(int32(len(huge)), huge),
		"unsupported version": func() []byte {
			f := append([]byte(nil), full...)
			binary.BigEndian.PutUint16(f[6:], 12) // Metadata v12 > our v11
			return f
		}(),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			rc := brokertest.DialRaw(t, addr)
			if err := rc.Send(b); err != nil {
				t.Fatal(err)
			}
			if !rc.Closed() {
				t.Fatal("connection not closed")
			}
			stillServes(t, addr)
		})
	}
}

// TestAPIProduceCorruptBatch: a CRC mismatch answers CORRUPT_MESSAGE for
// the partition and the connection stays usable; framing faults answer as
// Kafka 2.8 does.
func TestAPIProduceCorruptBatch(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "crc", 1, 1)
	now := time.Now().UnixMilli()
	batch, err := record.Build(record.NewBuildHeader(0, now), []record.Record{{Value: []byte("hello")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	good := append([]byte(nil), batch...)
	batch[len(batch)-1] ^= 0xff // the value's last byte, covered by the CRC
	rc := brokertest.DialRaw(t, c.Addr(0))
	produce := func(records []byte) int16 {
		kr, err := rc.RoundTrip(brokertest.ProduceRequest(7, 1, 5000, "crc", 0, records))
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := produce(batch); code != kerr.CorruptMessage.Code {
		t.Fatalf("corrupt batch: code %d, want CORRUPT_MESSAGE", code)
	}
	if code := produce(good); code != 0 {
		t.Fatalf("good batch after a corrupt one: code %d", code)
	}
	// Kafka 2.8's ProduceRequest.validateRecords: from v3 a partition
	// without one complete batch is INVALID_RECORD (its batch iterator
	// sees nothing), a batch size below the record overhead is
	// CORRUPT_MESSAGE.
	if code := produce([]byte{1, 2, 3}); code != kerr.InvalidRecord.Code {
		t.Fatalf("garbage: code %d, want INVALID_RECORD", code)
	}
	if code := produce(good[:len(good)-1]); code != kerr.InvalidRecord.Code {
		t.Fatalf("truncated batch: code %d, want INVALID_RECORD", code)
	}
	tiny := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(tiny[8:], 5)
	if code := produce(tiny); code != kerr.CorruptMessage.Code {
		t.Fatalf("batch length 5: code %d, want CORRUPT_MESSAGE", code)
	}
	two := append(append([]byte(nil), good...), good...)
	if code := produce(two); code != kerr.InvalidRecord.Code {
		t.Fatalf("two batches in produce v7: code %d, want INVALID_RECORD", code)
	}
}

// TestAPIProduceUnknownPartitionAndAcks: unknown partitions answer
// UNKNOWN_TOPIC_OR_PARTITION, bad acks INVALID_REQUIRED_ACKS.
func TestAPIProduceUnknownPartitionAndAcks(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "p", 1, 1)
	batch, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()), []record.Record{{Value: []byte("v")}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	rc := brokertest.DialRaw(t, c.Addr(0))
	send := func(topic string, part int32, acks int16) int16 {
		kr, err := rc.RoundTrip(brokertest.ProduceRequest(8, acks, 5000, topic, part, append([]byte(nil), batch...)))
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := send("p", 5, 1); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown partition: %d", code)
	}
	if code := send("nope", 0, -1); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %d", code)
	}
	if code := send("p", 0, 2); code != kerr.InvalidRequiredAcks.Code {
		t.Errorf("acks=2: %d", code)
	}
	if code := send("p", 0, -1); code != 0 {
		t.Errorf("acks=-1: %d", code)
	}
}
