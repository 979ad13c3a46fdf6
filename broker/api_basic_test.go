package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
)

// TestAPIApiVersions: every version 0-3 answers the table; v4+ answers
// UNSUPPORTED_VERSION with a v0 body listing ApiVersions' range (KIP-511).
func TestAPIApiVersions(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	for v := int16(0); v <= 3; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(v)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-test", "1.0"
		kr, err := rc.RoundTrip(req)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		resp := kr.(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("v%d: error %d", v, resp.ErrorCode)
		}
		got := map[int16][2]int16{}
		for _, k := range resp.ApiKeys {
			got[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
		}
		for key, want := range map[int16][2]int16{0: {0, 9}, 1: {0, 12}, 2: {0, 6}, 3: {0, 11}, 18: {0, 3}, 19: {0, 6}} {
			if got[key] != want {
				t.Errorf("v%d: key %d range %v, want %v", v, key, got[key], want)
			}
		}
	}
	// KIP-511: a newer version than ours gets a v0 answer with our range.
	for _, v := range []int16{4, 5} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(v)
		rc2 := brokertest.DialRaw(t, c.Addr(0))
		id := "raw"
		if err := rc2.Send(wire.AppendRequest(nil, req, 9, &id)); err != nil {
			t.Fatal(err)
		}
		frame, err := wire.ReadFrame(rc2.Conn(), 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		v0 := kmsg.NewPtrApiVersionsRequest()
		v0.SetVersion(0)
		kr, err := wire.ParseResponse(frame, v0, 9)
		if err != nil {
			t.Fatalf("v%d answer is not a v0 body: %v", v, err)
		}
		resp := kr.(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 ||
			resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MaxVersion != 3 {
			t.Fatalf("v%d: %+v", v, resp)
		}
	}
}

// TestAPIMetadataEmptyCluster: Metadata lists the live broker, the
// controller and the cluster id; an unknown topic answers
// UNKNOWN_TOPIC_OR_PARTITION with auto-creation off.
func TestAPIMetadataEmptyCluster(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	for _, v := range []int16{0, 1, 4, 9, 11} {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(v)
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("nope")
		req.Topics = append(req.Topics, rt)
		kr, err := rc.RoundTrip(req)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		resp := kr.(*kmsg.MetadataResponse)
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != c.Broker(0).ID() {
			t.Fatalf("v%d: brokers %+v", v, resp.Brokers)
		}
		if v >= 1 && resp.ControllerID != c.Broker(0).ID() {
			t.Errorf("v%d: controller %d", v, resp.ControllerID)
		}
		if v >= 2 && (resp.ClusterID == nil || *resp.ClusterID != c.Broker(0).ClusterID()) {
			t.Errorf("v%d: cluster id %v", v, resp.ClusterID)
		}
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("v%d: topics %+v", v, resp.Topics)
		}
	}
}

// TestAPIListOffsets: earliest, latest (the high watermark), by timestamp
// (first offset at or after it; -1 when none), and the v0 legacy form.
func TestAPIListOffsets(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "lo", 1, 1)
	p := c.SyncProducer(t, nil)
	base := time.Now().Add(-time.Hour)
	for i := 0; i < 5; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "lo", Value: sarama.StringEncoder("v"),
			Timestamp: base.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	rc := brokertest.DialRaw(t, c.Addr(0))
	list := func(v int16, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.SetVersion(v)
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "lo"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.MaxNumOffsets, rp.CurrentLeaderEpoch = ts, 1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kr, err := rc.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	if r := list(5, -2); r.ErrorCode != 0 || r.Offset != 0 {
		t.Errorf("earliest: %+v", r)
	}
	if r := list(5, -1); r.ErrorCode != 0 || r.Offset != 5 || r.LeaderEpoch < 0 {
		t.Errorf("latest: %+v", r)
	}
	if r := list(1, base.Add(150*time.Second).UnixMilli()); r.Offset != 3 || r.Timestamp != base.Add(3*time.Minute).UnixMilli() {
		t.Errorf("by timestamp: %+v", r)
	}
	if r := list(2, time.Now().Add(time.Hour).UnixMilli()); r.ErrorCode != 0 || r.Offset != -1 {
		t.Errorf("future timestamp: %+v", r)
	}
	if r := list(0, -1); r.ErrorCode != 0 || len(r.OldStyleOffsets) != 1 || r.OldStyleOffsets[0] != 5 {
		t.Errorf("v0 latest: %+v", r)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(0)
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "lo"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.MaxNumOffsets = -1, 10
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if offs := kr.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].OldStyleOffsets; len(offs) != 2 || offs[0] != 5 || offs[1] != 0 {
		t.Errorf("v0 latest, 10 offsets: %v, want [5 0] (log end, then the segment base)", offs)
	}
}

// TestAPIMetadataTopicIDs: Metadata v10+ carries the topic id the
// controller assigned (KIP-516) and lists the topic's partitions.
func TestAPIMetadataTopicIDs(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "ids", 2, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(11)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("ids")
	req.Topics = append(req.Topics, rt)
	brokertest.WaitFor(t, 30*time.Second, func() error {
		kr, err := rc.RoundTrip(req)
		if err != nil {
			return err
		}
		mt := kr.(*kmsg.MetadataResponse).Topics[0]
		if mt.ErrorCode != 0 || len(mt.Partitions) != 2 {
			return fmt.Errorf("topic %+v", mt)
		}
		if mt.TopicID == ([16]byte{}) {
			return fmt.Errorf("no topic id")
		}
		return nil
	})
}
