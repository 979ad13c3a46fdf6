package brokertest

// One-request helpers over RawConn that the handler tests (package broker)
// and the cluster tests (broker/clustertest) share.

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/record"
)

// FollowerFetch sends one Fetch for topic-0 at offset to addr and returns
// the partition's answer.
func FollowerFetch(t *testing.T, addr, topic string, version int16, replicaID int32, offset int64,
	epoch int32, maxWait int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	rc := DialRaw(t, addr)
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.ReplicaID = replicaID
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset = offset
	fp.PartitionMaxBytes = 1 << 20
	fp.CurrentLeaderEpoch = epoch
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kr.(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch v%d: error %d, %d topics", version, resp.ErrorCode, len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// DescribeLogDirs sends DescribeLogDirs v2 for every dir and returns
// the answer by dir.
func DescribeLogDirs(t *testing.T, addr string) map[string]kmsg.DescribeLogDirsResponseDir {
	t.Helper()
	rc := DialRaw(t, addr)
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.SetVersion(2)
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kmsg.DescribeLogDirsResponseDir{}
	for _, d := range kr.(*kmsg.DescribeLogDirsResponse).Dirs {
		out[d.Dir] = d
	}
	return out
}

// WriteMarker sends WriteTxnMarkers v1 for topic-0 as the transaction
// coordinator would and returns the partition's error code.
func WriteMarker(t *testing.T, rc *RawConn, topic string, pid int64, epoch int16, commit bool, coordEpoch int32) int16 {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, coordEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
}

// ListLatest returns ListOffsets v5 latest of topic-0 at isolation level iso.
func ListLatest(t *testing.T, rc *RawConn, topic string, iso int8) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID, req.IsolationLevel = 5, -1, iso
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("list offsets: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	return p.Offset
}

// QuotaProduce is a Produce v8 of one 512-byte record.
func QuotaProduce(t testing.TB, topic string, acks int16) *kmsg.ProduceRequest {
	batch, err := record.Build(record.NewBuildHeader(0, time.Now().UnixMilli()),
		[]record.Record{{Value: make([]byte, 512)}}, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return ProduceRequest(8, acks, 10000, topic, 0, batch)
}

// ProduceRequest is a Produce of version with records (one or more
// encoded batches, used as they are) for one partition of topic.
func ProduceRequest(version, acks int16, timeoutMs int32, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	req.Acks, req.TimeoutMillis = acks, timeoutMs
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// FetchRequest is a Fetch v11 from offset 0 of partition 0 of topic, as
// replicaID (-1 for a consumer), waiting up to maxWaitMs for one byte
// (1 MiB at most, no leader epoch, no session).
func FetchRequest(replicaID, maxWaitMs int32, topic string) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = replicaID, maxWaitMs, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LogStartOffset = 1<<20, -1, -1
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	return req
}
