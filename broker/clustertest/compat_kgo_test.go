package clustertest_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestCompatKgoCustomProtocolGroup: a group whose protocol type is not
// "consumer" (Kafka Connect and Schema Registry use their own) works
// through the group APIs with opaque metadata and assignments; a member
// of another protocol type is refused with INCONSISTENT_GROUP_PROTOCOL, and
// non-members get UNKNOWN_MEMBER_ID.
func TestCompatKgoCustomProtocolGroup(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "1"))
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	const group = "custom-group"
	join := func(member, protocolType string) *kmsg.JoinGroupResponse {
		t.Helper()
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = 7
		req.Group, req.MemberID, req.ProtocolType = group, member, protocolType
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "p1", []byte{1, 2, 3}
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := join("", "my-protocol")
	if !errors.Is(kerr.ErrorForCode(first.ErrorCode), kerr.MemberIDRequired) || first.MemberID == "" {
		t.Fatalf("first join: %+v", first)
	}
	joined := join(first.MemberID, "my-protocol")
	if joined.ErrorCode != 0 || joined.LeaderID != first.MemberID || joined.Protocol == nil || *joined.Protocol != "p1" ||
		joined.ProtocolType == nil || *joined.ProtocolType != "my-protocol" || len(joined.Members) != 1 ||
		!bytes.Equal(joined.Members[0].ProtocolMetadata, []byte{1, 2, 3}) {
		t.Fatalf("join: %+v", joined)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version = 5
	sync.Group, sync.Generation, sync.MemberID = group, joined.Generation, first.MemberID
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("my-protocol"), kmsg.StringPtr("p1")
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = first.MemberID, []byte{9, 9}
	sync.GroupAssignment = append(sync.GroupAssignment, a)
	sresp, err := sync.RequestWith(ctx, cl)
	if err != nil || sresp.ErrorCode != 0 || !bytes.Equal(sresp.MemberAssignment, []byte{9, 9}) {
		t.Fatalf("sync: %+v %v", sresp, err)
	}
	// KIP-559: a SyncGroup naming another protocol type is refused.
	bad := *sync
	bad.ProtocolType = kmsg.StringPtr("consumer")
	if r, err := bad.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("sync with another protocol type: %+v %v", r, err)
	}
	other := join("", "consumer")
	if other.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("join with another protocol type: %+v", other)
	}

	desc := kmsg.NewPtrDescribeGroupsRequest()
	desc.Groups = []string{group}
	dresp, err := desc.RequestWith(ctx, cl)
	if err != nil || len(dresp.Groups) != 1 {
		t.Fatalf("describe: %+v %v", dresp, err)
	}
	g := dresp.Groups[0]
	if g.ErrorCode != 0 || g.State != "Stable" || g.ProtocolType != "my-protocol" || g.Protocol != "p1" || len(g.Members) != 1 ||
		!bytes.Equal(g.Members[0].ProtocolMetadata, []byte{1, 2, 3}) || !bytes.Equal(g.Members[0].MemberAssignment, []byte{9, 9}) {
		t.Fatalf("described group: %+v", g)
	}
	list := kmsg.NewPtrListGroupsRequest()
	lresp, err := list.RequestWith(ctx, cl)
	if err != nil || len(lresp.Groups) != 1 || lresp.Groups[0].ProtocolType != "my-protocol" {
		t.Fatalf("list: %+v %v", lresp, err)
	}

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.Generation, hb.MemberID = group, joined.Generation, "stranger"
	if r, err := hb.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat from a non-member: %+v %v", r, err)
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 4
	leave.Group = group
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = "stranger"
	leave.Members = append(leave.Members, lm)
	if r, err := leave.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 || len(r.Members) != 1 || r.Members[0].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave of a non-member: %+v %v", r, err)
	}
	lm.MemberID = first.MemberID
	leave.Members = []kmsg.LeaveGroupRequestMember{lm}
	if r, err := leave.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 || r.Members[0].ErrorCode != 0 {
		t.Fatalf("leave: %+v %v", r, err)
	}
	dresp, _ = desc.RequestWith(ctx, cl)
	if g := dresp.Groups[0]; g.State != "Empty" || len(g.Members) != 0 {
		t.Fatalf("after leaving: %+v", g)
	}
}

// TestCompatKgoReadCommittedAndAutoCreate: a read_committed kgo consumer
// reads everything when there are no transactions (the last stable offset
// is the high watermark), and Metadata's allow_auto_topic_creation is
// honoured both ways.
func TestCompatKgoReadCommittedAndAutoCreate(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("auto.create.topics.enable", "true"))
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("kgo-auto"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := 0; i < 10; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumeTopics("kgo-auto"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	n := 0
	for n < 10 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed consumed %d of 10", n)
		}
		n += fs.NumRecords()
	}

	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("kgo-no-create")
	md.Topics = append(md.Topics, mt)
	md.AllowAutoTopicCreation = false
	resp, err := md.RequestWith(ctx, prod)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("metadata without auto-creation: %+v %v", resp, err)
	}
	md.AllowAutoTopicCreation = true
	mt.Topic = kmsg.StringPtr("kgo-create")
	md.Topics = []kmsg.MetadataRequestTopic{mt}
	resp, err = md.RequestWith(ctx, prod)
	if err != nil || len(resp.Topics) != 1 || (resp.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code && resp.Topics[0].ErrorCode != 0) {
		t.Fatalf("metadata with auto-creation: %+v %v", resp, err)
	}
	c.WaitForLeader(t, "kgo-create", 0)
	if _, ok := c.Broker(0).Metadata().Partition("kgo-no-create", 0); ok {
		t.Fatal("kgo-no-create was created")
	}
}

// TestCompatKgoCompactedNullKey: a record without key is refused by a
// compacted topic (Kafka 2.8: INVALID_RECORD, "Compacted topic cannot
// accept message without key"); keyed records and tombstones are stored.
func TestCompatKgoCompactedNullKey(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "compacted", 1, 1, map[string]*string{"cleanup.policy": strp("compact")})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("compacted"),
		kgo.RecordRetries(1), kgo.RecordDeliveryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte("k")}).FirstErr(); err != nil {
		t.Fatalf("tombstone: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("no key")}).FirstErr(); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("null key into a compacted topic: %v, want INVALID_RECORD", err)
	}
}

// TestCompatOffsetCommitUnknownTopic: OffsetCommit answers partitions
// missing from the metadata cache UNKNOWN_TOPIC_OR_PARTITION and commits
// the others of the same request, in v1+ as in v0 (Kafka 2.8).
func TestCompatOffsetCommitUnknownTopic(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "1"))
	c.CreateTopic(t, "known", 1, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, version := range []int16{0, 2, 8} {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version = version
		req.Group, req.Generation = "uc", -1
		for _, tp := range []struct {
			topic     string
			partition int32
		}{{"nope", 0}, {"known", 0}, {"known", 3}} {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = tp.topic
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = tp.partition, 4
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		got := []int16{resp.Topics[0].Partitions[0].ErrorCode, resp.Topics[1].Partitions[0].ErrorCode, resp.Topics[2].Partitions[0].ErrorCode}
		want := []int16{kerr.UnknownTopicOrPartition.Code, 0, kerr.UnknownTopicOrPartition.Code}
		if got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("v%d: codes %v, want %v", version, got, want)
		}
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = "uc"
	resp, err := fetch.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].Topic != "known" || resp.Topics[0].Partitions[0].Offset != 4 {
		t.Fatalf("committed offsets: %+v %v", resp, err)
	}
}
