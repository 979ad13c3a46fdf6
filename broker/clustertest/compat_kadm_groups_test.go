package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"samsa/broker/brokertest"
)

// produceTimed writes n records to each partition of topic with the
// timestamps base, base+1s, ... and fails the test on any error.
func produceTimed(t *testing.T, cl *kgo.Client, topic string, partitions int32, n int, base time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("p%d-%d", p, i)),
				Timestamp: base.Add(time.Duration(i) * time.Second)})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestCompatKadmOffsetsAndGroups: franz-go's admin client lists start, end
// and by-timestamp offsets (also of an empty partition), deletes records,
// commits and fetches group offsets, deletes offsets and groups, describes
// and lists groups while a cooperative-sticky kgo consumer is a member, and
// reads and writes client quotas, log dirs and leader epochs.
func TestCompatKadmOffsetsAndGroups(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "2"))
	c.CreateTopic(t, "ko", 2, 1)
	c.CreateTopic(t, "kempty", 1, 1)
	adm, _ := newKadm(t, c.Addrs())
	ctx := kctx(t)
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	produceTimed(t, prod, "ko", 2, 10, base)

	kadmCheckListOffsets(t, ctx, adm, base)

	kadmCheckDeleteRecords(t, ctx, adm)

	kadmCheckGroupOffsets(t, ctx, adm)

	kadmCheckLiveGroup(t, ctx, adm, c)

	kadmCheckClientQuotas(t, ctx, adm)

	kadmCheckLogDirsAndACLs(t, ctx, adm)
}

// checkListed fails the test unless lo holds offset want[topic][p] for
// every partition of want (err is the listing's error).
func checkListed(t *testing.T, what string, lo kadm.ListedOffsets, err error, want map[string]map[int32]int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for topic, ps := range want {
		for p, off := range ps {
			got, ok := lo.Lookup(topic, p)
			if !ok || got.Err != nil || got.Offset != off {
				t.Fatalf("%s %s-%d: %+v (found %v), want offset %d", what, topic, p, got, ok, off)
			}
		}
	}
}

// kadmCheckListOffsets: start, end and by-timestamp offsets of ko (10
// records a partition, timestamps base, base+1s, ...) and the empty kempty.
func kadmCheckListOffsets(t *testing.T, ctx context.Context, adm *kadm.Client, base time.Time) {
	t.Helper()
	lo, err := adm.ListStartOffsets(ctx, "ko", "kempty")
	checkListed(t, "start", lo, err, map[string]map[int32]int64{"ko": {0: 0, 1: 0}, "kempty": {0: 0}})
	lo, err = adm.ListEndOffsets(ctx, "ko", "kempty")
	checkListed(t, "end", lo, err, map[string]map[int32]int64{"ko": {0: 10, 1: 10}, "kempty": {0: 0}})
	lo, err = adm.ListOffsetsAfterMilli(ctx, base.Add(5*time.Second).UnixMilli(), "ko")
	checkListed(t, "after 5s", lo, err, map[string]map[int32]int64{"ko": {0: 5, 1: 5}})
	if o, _ := lo.Lookup("ko", 1); o.Timestamp != base.Add(5*time.Second).UnixMilli() {
		t.Fatalf("timestamp of the offset found by time: %+v", o)
	}
	lo, err = adm.ListOffsetsAfterMilli(ctx, base.Add(4500*time.Millisecond).UnixMilli(), "ko")
	checkListed(t, "after 4.5s", lo, err, map[string]map[int32]int64{"ko": {0: 5, 1: 5}})
	// After every record: kadm falls back to the end offset.
	lo, err = adm.ListOffsetsAfterMilli(ctx, time.Now().Add(time.Hour).UnixMilli(), "ko", "kempty")
	checkListed(t, "after all", lo, err, map[string]map[int32]int64{"ko": {0: 10, 1: 10}, "kempty": {0: 0}})
	lo, err = adm.ListStartOffsets(ctx, "nope")
	if o, ok := lo.Lookup("nope", -1); err != nil || !ok || !errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown topic: %+v %v", lo, err)
	}
}

// kadmCheckDeleteRecords: DeleteRecords moves ko-0's start to 3 and
// refuses an offset past ko-1's high watermark.
func kadmCheckDeleteRecords(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	var del kadm.Offsets
	del.AddOffset("ko", 0, 3, -1)
	dr, err := adm.DeleteRecords(ctx, del)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := dr.Lookup("ko", 0); !ok || r.Err != nil || r.LowWatermark != 3 {
		t.Fatalf("delete records: %+v", dr)
	}
	lo, err := adm.ListStartOffsets(ctx, "ko")
	checkListed(t, "start after delete", lo, err, map[string]map[int32]int64{"ko": {0: 3, 1: 0}})
	var tooFar kadm.Offsets
	tooFar.AddOffset("ko", 1, 11, -1)
	dr, _ = adm.DeleteRecords(ctx, tooFar)
	if r, _ := dr.Lookup("ko", 1); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("delete records past the high watermark: %+v", dr)
	}
}

// kadmCheckGroupOffsets: offsets of group kg, which has no members, are
// committed, fetched, lagged, described and deleted.
func kadmCheckGroupOffsets(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	var commit kadm.Offsets
	commit.Add(kadm.Offset{Topic: "ko", Partition: 0, At: 5, LeaderEpoch: -1, Metadata: "meta-0"})
	commit.Add(kadm.Offset{Topic: "ko", Partition: 1, At: 7, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "kg", commit); err != nil {
		t.Fatal(err)
	}
	fo, err := adm.FetchOffsets(ctx, "kg")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fo.Lookup("ko", 0); !ok || o.Err != nil || o.At != 5 || o.Metadata != "meta-0" {
		t.Fatalf("fetch offsets p0: %+v", fo)
	}
	if o, ok := fo.Lookup("ko", 1); !ok || o.At != 7 {
		t.Fatalf("fetch offsets p1: %+v", fo)
	}
	// OffsetFetch for a group never seen: no offsets, no error (ZK-era Kafka).
	if fo, err := adm.FetchOffsets(ctx, "never-seen"); err != nil || len(fo) != 0 {
		t.Fatalf("fetch offsets of an unknown group: %+v %v", fo, err)
	}
	lags, err := adm.Lag(ctx, "kg")
	if err != nil {
		t.Fatal(err)
	}
	if l := lags["kg"]; l.FetchErr != nil || l.DescribeErr != nil || l.Lag.Total() != (10-5)+(10-7) {
		t.Fatalf("lag of kg: total %d, %+v", l.Lag.Total(), l)
	}
	dg, err := adm.DescribeGroups(ctx, "kg")
	if err != nil || dg["kg"].State != "Empty" || len(dg["kg"].Members) != 0 {
		t.Fatalf("describe an offsets-only group: %+v %v", dg, err)
	}
	ts := kadm.TopicsSet{}
	ts.Add("ko", 0)
	dor, err := adm.DeleteOffsets(ctx, "kg", ts)
	if err != nil || dor.Error() != nil {
		t.Fatalf("delete offsets: %+v %v", dor, err)
	}
	fo, _ = adm.FetchOffsets(ctx, "kg")
	if o, ok := fo.Lookup("ko", 0); ok && o.At >= 0 {
		t.Fatalf("ko-0 still committed after DeleteOffsets: %+v", o)
	}
}

// kadmCheckLiveGroup: group kg2 with a live cooperative-sticky kgo member
// is described, listed and protected from deletion until the member leaves.
func kadmCheckLiveGroup(t *testing.T, ctx context.Context, adm *kadm.Client, c *brokertest.Cluster) {
	t.Helper()
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumerGroup("kg2"), kgo.ConsumeTopics("ko"),
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ClientID("kgo-member"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := 0
	for got < 17 {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		fs := cons.PollFetches(pctx)
		err := pctx.Err()
		cancel()
		if err != nil {
			t.Fatalf("consumed %d of 17: %v", got, err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	dg, err := adm.DescribeGroups(ctx, "kg2")
	g := dg["kg2"]
	if err != nil || g.State != "Stable" || g.ProtocolType != "consumer" || g.Protocol != "cooperative-sticky" || len(g.Members) != 1 {
		t.Fatalf("describe kg2: %+v %v", dg, err)
	}
	if m := g.Members[0]; m.ClientID != "kgo-member" || m.ClientHost == "" {
		t.Fatalf("member %+v", m)
	}
	if as := dg.AssignedPartitions(); len(as["ko"]) != 2 {
		t.Fatalf("assigned partitions %v", as)
	}
	lg, err := adm.ListGroups(ctx)
	if err != nil || lg["kg2"].ProtocolType != "consumer" || lg["kg2"].State != "Stable" || lg["kg"].State != "Empty" {
		t.Fatalf("list groups: %+v %v", lg, err)
	}
	if lg, err := adm.ListGroups(ctx, "Stable"); err != nil || len(lg) != 1 {
		t.Fatalf("list stable groups: %+v %v", lg, err)
	}
	ts := kadm.TopicsSet{}
	ts.Add("ko", 1)
	dor, _ := adm.DeleteOffsets(ctx, "kg2", ts)
	if err, _ := dor.Lookup("ko", 1); !errors.Is(err, kerr.GroupSubscribedToTopic) {
		t.Fatalf("delete offsets of a subscribed topic: %+v", dor)
	}
	dgr, err := adm.DeleteGroups(ctx, "kg2", "kg", "never-seen")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(dgr["kg2"].Err, kerr.NonEmptyGroup) || dgr["kg"].Err != nil || !errors.Is(dgr["never-seen"].Err, kerr.GroupIDNotFound) {
		t.Fatalf("delete groups: %+v", dgr)
	}
	fc := adm.FindGroupCoordinators(ctx, "kg2")
	if r := fc["kg2"]; r.Err != nil || r.NodeID != c.Broker(0).ID() {
		t.Fatalf("find coordinator: %+v", fc)
	}
	cons.Close()
	brokertest.WaitFor(t, 15*time.Second, func() error {
		dg, err := adm.DescribeGroups(ctx, "kg2")
		if err != nil || dg["kg2"].State != "Empty" {
			return fmt.Errorf("kg2 after its member left: %+v %v", dg, err)
		}
		return nil
	})
	if dgr, err := adm.DeleteGroups(ctx, "kg2"); err != nil || dgr["kg2"].Err != nil {
		t.Fatalf("delete the empty group: %+v %v", dgr, err)
	}
}

// kadmCheckClientQuotas: a client-id quota is altered, described and removed.
func kadmCheckClientQuotas(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	name := "quota-client"
	entity := kadm.ClientQuotaEntity{{Type: "client-id", Name: &name}}
	aq, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity,
		Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}, {Key: "consumer_byte_rate", Value: 2048}}}})
	if err != nil || len(aq) != 1 || aq[0].Err != nil {
		t.Fatalf("alter quotas: %+v %v", aq, err)
	}
	dq, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchName: &name}})
	if err != nil || len(dq) != 1 || len(dq[0].Values) != 2 {
		t.Fatalf("describe quotas: %+v %v", dq, err)
	}
	for _, v := range dq[0].Values {
		if (v.Key == "producer_byte_rate" && v.Value != 1024) || (v.Key == "consumer_byte_rate" && v.Value != 2048) {
			t.Fatalf("quota %+v", v)
		}
	}
	aq, err = adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity,
		Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Remove: true}, {Key: "consumer_byte_rate", Remove: true}}}})
	if err != nil || aq[0].Err != nil {
		t.Fatalf("remove quotas: %+v %v", aq, err)
	}
	if dq, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: 2}}); err != nil || len(dq) != 0 {
		t.Fatalf("describe quotas after removal: %+v %v", dq, err)
	}
}

// kadmCheckLogDirsAndACLs: log dirs hold ko-1's data, ko-1's epoch 0 ends at
// 10, and the ACL APIs answer SECURITY_DISABLED without an authorizer.
func kadmCheckLogDirsAndACLs(t *testing.T, ctx context.Context, adm *kadm.Client) {
	t.Helper()
	ld, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	ld.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil {
			t.Errorf("log dir %s of %d: %v", d.Dir, d.Broker, d.Err)
		}
		if p, ok := d.Topics["ko"][1]; ok {
			found = p.Size > 0
		}
	})
	if !found {
		t.Fatalf("log dirs lack ko-1 with data: %+v", ld)
	}
	var ole kadm.OffsetForLeaderEpochRequest
	ole.Add("ko", 1, 0)
	oe, err := adm.OffsetForLeaderEpoch(ctx, ole)
	if err != nil {
		t.Fatal(err)
	}
	if r := oe["ko"][1]; r.Err != nil || r.EndOffset != 10 || r.LeaderEpoch != 0 {
		t.Fatalf("offset for leader epoch: %+v", oe)
	}
	// No authorizer: the ACL APIs answer SECURITY_DISABLED.
	b := kadm.NewACLs().Topics("ko").Allow("User:x").AllowHosts().Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
	acls, err := adm.DescribeACLs(ctx, b)
	if err != nil || len(acls) == 0 {
		t.Fatalf("describe ACLs: %+v %v", acls, err)
	}
	for _, r := range acls {
		if !errors.Is(r.Err, kerr.SecurityDisabled) {
			t.Fatalf("describe ACLs: %+v", r)
		}
	}
}

// TestCompatDeletedTopicOffsets: deleting a topic removes the groups'
// committed offsets of it (Kafka 2.8's handleDeletedPartitions), so a group
// consuming the topic re-created under the same name starts by its reset
// policy instead of at a stale offset; offsets of other topics stay.
func TestCompatDeletedTopicOffsets(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("offsets.topic.num.partitions", "2"))
	c.CreateTopic(t, "recreated", 1, 1)
	c.CreateTopic(t, "kept", 1, 1)
	adm, _ := newKadm(t, c.Addrs(), kgo.MetadataMinAge(10*time.Millisecond))
	ctx := kctx(t)
	var commit kadm.Offsets
	commit.AddOffset("recreated", 0, 3, -1) // below the re-created topic's end: a stale offset would skip records
	commit.AddOffset("kept", 0, 7, -1)
	if err := adm.CommitAllOffsets(ctx, "dg", commit); err != nil {
		t.Fatal(err)
	}
	if r, err := adm.DeleteTopics(ctx, "recreated"); err != nil || r["recreated"].Err != nil {
		t.Fatalf("delete: %+v %v", r, err)
	}
	brokertest.WaitFor(t, 15*time.Second, func() error {
		fo, err := adm.FetchOffsets(ctx, "dg")
		if err != nil {
			return err
		}
		if o, ok := fo.Lookup("recreated", 0); ok && o.At >= 0 {
			return fmt.Errorf("offset of the deleted topic still committed: %+v", o)
		}
		if o, ok := fo.Lookup("kept", 0); !ok || o.At != 7 {
			return fmt.Errorf("offset of kept: %+v", fo)
		}
		return nil
	})
	c.CreateTopic(t, "recreated", 1, 1)
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("recreated"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := 0; i < 5; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumerGroup("dg"), kgo.ConsumeTopics("recreated"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	n := 0
	for n < 5 {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		fs := cons.PollFetches(pctx)
		err := pctx.Err()
		cancel()
		if err != nil {
			t.Fatalf("the group read %d of the re-created topic's 5 records", n)
		}
		n += fs.NumRecords()
	}
}
