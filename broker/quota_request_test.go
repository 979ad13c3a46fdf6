package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/zkutil"
)

// throttleHook records the throttle times a franz-go client was given.
type throttleHook struct {
	mu  sync.Mutex
	max time.Duration
	n   int
}

func (h *throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.max = max(h.max, d)
	if d > 0 {
		h.n++
	}
}

func (h *throttleHook) get() (time.Duration, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.max, h.n
}

func quotaKgo(t *testing.T, c *brokertest.Cluster, clientID string, hook *throttleHook) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ClientID(clientID), kgo.WithHooks(hook))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestQuotaRequestPercentage: a request_percentage set with
// AlterClientQuotas on client-id "busy" gets a franz-go client issuing
// Metadata requests throttle_time_ms answers, each at most one quota
// window (1 s), while client-id "idle" is never throttled; a follower
// fetch (replica_id >= 0, inter-broker, exempt as in Kafka) by the same
// client id is answered without throttle; DescribeClientQuotas shows the
// quota.
func TestQuotaRequestPercentage(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "q", 1, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	setClientQuota(t, admin, "busy", "request_percentage", 0.01) // 0.1 ms of handler time per second
	setClientQuota(t, admin, "probe", "producer_byte_rate", 1)
	awaitProbeThrottle(t, c, "q", true) // the busy quota, written first, is applied too

	hook := &throttleHook{}
	cl := quotaKgo(t, c, "busy", hook)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	awaitRequestThrottle(t, ctx, cl, hook)
	checkRequestThrottleCap(t, c)
	checkFetchesOverRequestQuota(t, c)
	checkNoQuotaUnthrottled(t, ctx, c)

	got := describeClientQuota(t, admin, "busy")
	if got["request_percentage"] != 0.01 {
		t.Errorf("DescribeClientQuotas busy = %v", got)
	}
}

// awaitRequestThrottle sends Metadata requests through cl until one is
// throttled (within one quota window) and the client's throttle hook has
// seen it.
func awaitRequestThrottle(t *testing.T, ctx context.Context, cl *kgo.Client, hook *throttleHook) {
	t.Helper()
	var throttled *kmsg.MetadataResponse
	for i := 0; i < 2000 && throttled == nil; i++ {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("metadata %d: %v", i, err)
		}
		if resp.ThrottleMillis > 0 {
			throttled = resp
		}
	}
	if throttled == nil {
		t.Fatal("2000 Metadata requests at request_percentage 0.01 never throttled")
	}
	if throttled.ThrottleMillis > 1000 {
		t.Errorf("throttle_time_ms %d above one quota window (1000 ms)", throttled.ThrottleMillis)
	}
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if d, n := hook.get(); d <= 0 || n == 0 {
			return errWant(true)
		}
		return nil
	})
}

// checkRequestThrottleCap: far over the quota the throttle stays capped at
// one window (ClientRequestQuotaManager.maxThrottleTimeMs) instead of
// growing.
func checkRequestThrottleCap(t *testing.T, c *brokertest.Cluster) {
	t.Helper()
	capped := false
	for i := 0; i < 4000 && !capped; i++ {
		m := rawRoundTrip(t, c.Addr(0), "busy", metadataV9()).(*kmsg.MetadataResponse)
		if m.ThrottleMillis > 1000 {
			t.Fatalf("throttle_time_ms %d above the 1000 ms cap", m.ThrottleMillis)
		}
		if i%500 == 0 {
			t.Logf("request %d: throttle %d ms", i, m.ThrottleMillis)
		}
		capped = m.ThrottleMillis == 1000
	}
	if !capped {
		t.Fatal("4000 more Metadata requests never reached the 1000 ms throttle cap")
	}
}

// checkFetchesOverRequestQuota: client busy, over its request quota, is
// not throttled on an inter-broker follower fetch, and its consumer fetch
// is answered throttled and empty.
func checkFetchesOverRequestQuota(t *testing.T, c *brokertest.Cluster) {
	t.Helper()
	f := kmsg.NewPtrFetchRequest()
	f.Version = 11
	f.ReplicaID = 0
	f.MaxWaitMillis = 0
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "q"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 10
	ft.Partitions = append(ft.Partitions, fp)
	f.Topics = append(f.Topics, ft)
	if fr := rawRoundTrip(t, c.Addr(0), "busy", f).(*kmsg.FetchResponse); fr.ThrottleMillis != 0 {
		t.Errorf("follower fetch throttled %d ms", fr.ThrottleMillis)
	}
	if m := rawRoundTrip(t, c.Addr(0), "busy", metadataV9()).(*kmsg.MetadataResponse); m.ThrottleMillis <= 0 {
		t.Errorf("busy client's next Metadata not throttled")
	}
	// A consumer fetch over the request quota is answered empty, as
	// Kafka's getThrottledResponse (there are records: the probe's).
	f.ReplicaID = -1
	if fr := rawRoundTrip(t, c.Addr(0), "busy", f).(*kmsg.FetchResponse); fr.ThrottleMillis <= 0 || len(fr.Topics) != 0 {
		t.Errorf("consumer fetch over the request quota: throttle %d ms, %d topics; want throttled and empty",
			fr.ThrottleMillis, len(fr.Topics))
	}
}

// checkNoQuotaUnthrottled: a client without a quota is never throttled.
func checkNoQuotaUnthrottled(t *testing.T, ctx context.Context, c *brokertest.Cluster) {
	t.Helper()
	idle := &throttleHook{}
	icl := quotaKgo(t, c, "idle", idle)
	for i := 0; i < 50; i++ {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, icl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ThrottleMillis != 0 {
			t.Fatalf("client without a quota throttled %d ms", resp.ThrottleMillis)
		}
	}
}

// describeClientQuota returns a client-id entity's quotas.
func describeClientQuota(t *testing.T, admin sarama.ClusterAdmin, client string) map[string]float64 {
	t.Helper()
	ents, err := admin.DescribeClientQuotas([]sarama.QuotaFilterComponent{{EntityType: sarama.QuotaEntityClientID,
		MatchType: sarama.QuotaMatchExact, Match: client}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Fatalf("DescribeClientQuotas %s: %d entities", client, len(ents))
	}
	return ents[0].Values
}

// metadataV9 is a Metadata request of all topics at v9 (throttle_time_ms
// in the answer since v3).
func metadataV9() *kmsg.MetadataRequest {
	m := kmsg.NewPtrMetadataRequest()
	m.Version = 9
	return m
}

func mutationCreateTopics(version int16, timeoutMs int32, topics map[string]int32) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = version
	req.TimeoutMillis = timeoutMs
	for _, name := range sortedKeys(topics) {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, topics[name], 1
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func sortedKeys(m map[string]int32) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out { // tiny: insertion sort keeps the request's order stable
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func topicCodes(resp *kmsg.CreateTopicsResponse) map[string]int16 {
	out := map[string]int16{}
	for _, t := range resp.Topics {
		out[t.Topic] = t.ErrorCode
	}
	return out
}

const codeThrottlingQuotaExceeded = 89

// TestQuotaControllerMutationRate: controller_mutation_rate=1 on client-id
// "mut" (a burst of 11 partitions: 11 samples of 1 s) makes the broker
// answer as Kafka's token bucket does:
//   - franz-go CreateTopics v6 of 10 + 30 partitions: both created (the
//     bucket had 11 tokens and is not checked again within a topic), the
//     bucket at -29, so a third topic in the same request is refused with
//     THROTTLING_QUOTA_EXCEEDED and not created, and throttle_time_ms is
//     about 29 s;
//   - strict DeleteTopics v5 and CreatePartitions v3 are refused per topic;
//   - permissive CreateTopics v5 creates its topic but is throttled;
//   - client-id "free" is not limited; DescribeClientQuotas shows the rate.
func TestQuotaControllerMutationRate(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "q", 1, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	setClientQuota(t, admin, "mut", "controller_mutation_rate", 1)
	setClientQuota(t, admin, "probe", "producer_byte_rate", 1)
	awaitProbeThrottle(t, c, "q", true)

	hook := &throttleHook{}
	cl := quotaKgo(t, c, "mut", hook)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mutationCreateTopics(6, 0, map[string]int32{"m1": 10, "m2": 30, "m3": 1})
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	codes := topicCodes(resp)
	if codes["m1"] != 0 || codes["m2"] != 0 || codes["m3"] != codeThrottlingQuotaExceeded {
		t.Fatalf("CreateTopics v6 codes %v, want m1, m2 created and m3 THROTTLING_QUOTA_EXCEEDED", codes)
	}
	for _, rt := range resp.Topics {
		if rt.Topic == "m3" && (rt.ErrorMessage == nil || *rt.ErrorMessage != "The throttling quota has been exceeded.") {
			t.Errorf("m3 message %v", rt.ErrorMessage)
		}
	}
	// -29 tokens at 1 token/s: 29 s, less the little time since.
	if resp.ThrottleMillis < 20_000 || resp.ThrottleMillis > 29_000 {
		t.Errorf("throttle_time_ms %d, want about 29000", resp.ThrottleMillis)
	}
	brokertest.WaitFor(t, 10*time.Second, func() error {
		if d, _ := hook.get(); d < 20*time.Second {
			return errWant(true)
		}
		return nil
	})
	c.WaitForLeader(t, "m2", 29)
	meta := rawRoundTrip(t, c.Addr(0), "free", metadataV9()).(*kmsg.MetadataResponse)
	for _, mt := range meta.Topics {
		if mt.Topic != nil && *mt.Topic == "m3" && mt.ErrorCode == 0 {
			t.Error("refused topic m3 was created")
		}
	}

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 5
	del.TopicNames = []string{"m1"}
	dr := rawRoundTrip(t, c.Addr(0), "mut", del).(*kmsg.DeleteTopicsResponse)
	if len(dr.Topics) != 1 || dr.Topics[0].ErrorCode != codeThrottlingQuotaExceeded || dr.ThrottleMillis <= 0 {
		t.Errorf("DeleteTopics v5 over quota: %+v throttle %d", dr.Topics, dr.ThrottleMillis)
	}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "m1", 12
	cp.Topics = append(cp.Topics, cpt)
	cpr := rawRoundTrip(t, c.Addr(0), "mut", cp).(*kmsg.CreatePartitionsResponse)
	if len(cpr.Topics) != 1 || cpr.Topics[0].ErrorCode != codeThrottlingQuotaExceeded || cpr.ThrottleMillis <= 0 {
		t.Errorf("CreatePartitions v3 over quota: %+v throttle %d", cpr.Topics, cpr.ThrottleMillis)
	}

	// Permissive (v5): created anyway, answer throttled.
	old := rawRoundTrip(t, c.Addr(0), "mut", mutationCreateTopics(5, 0, map[string]int32{"m4": 1})).(*kmsg.CreateTopicsResponse)
	if codes := topicCodes(old); codes["m4"] != 0 || old.ThrottleMillis < 20_000 {
		t.Errorf("CreateTopics v5 over quota: codes %v throttle %d, want created and throttled", codes, old.ThrottleMillis)
	}
	c.WaitForLeader(t, "m4", 0)

	free := rawRoundTrip(t, c.Addr(0), "free", mutationCreateTopics(6, 0, map[string]int32{"f1": 40})).(*kmsg.CreateTopicsResponse)
	if codes := topicCodes(free); codes["f1"] != 0 || free.ThrottleMillis != 0 {
		t.Errorf("client without a quota: codes %v throttle %d", codes, free.ThrottleMillis)
	}
	if got := describeClientQuota(t, admin, "mut"); got["controller_mutation_rate"] != 1 {
		t.Errorf("DescribeClientQuotas mut = %v", got)
	}
}

// TestQuotaControllerMutationFromZooKeeper: controller_mutation_rate
// written straight to /config/users/<default> with a change notification
// (as kafka-configs --zookeeper writes it) applies to the PLAINTEXT
// principal without a restart: with 0.01 partitions/s (a burst of 0.11) a
// second one-partition topic right after a first is refused.
func TestQuotaControllerMutationFromZooKeeper(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	zk := c.Broker(0).ZooKeeper()
	if err := zk.SetEntityConfig(zkutil.ConfigTypeUser, zkutil.DefaultEntityName,
		map[string]string{"controller_mutation_rate": "0.01"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	brokertest.WaitFor(t, 20*time.Second, func() error {
		n++
		a, b := fmt.Sprintf("z%da", n), fmt.Sprintf("z%db", n)
		first := rawRoundTrip(t, c.Addr(0), "zk", mutationCreateTopics(6, 0, map[string]int32{a: 1})).(*kmsg.CreateTopicsResponse)
		second := rawRoundTrip(t, c.Addr(0), "zk", mutationCreateTopics(6, 0, map[string]int32{b: 1})).(*kmsg.CreateTopicsResponse)
		if code := topicCodes(second)[b]; code != codeThrottlingQuotaExceeded {
			return fmt.Errorf("round %d: codes %v, %v; want the second refused", n, topicCodes(first), topicCodes(second))
		}
		if second.ThrottleMillis <= 0 {
			t.Fatalf("refused CreateTopics without throttle_time_ms")
		}
		return nil
	})
}
