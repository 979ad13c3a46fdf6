package broker_test

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
	"samsa/zkutil"
)

// quotaRun is what one client measured.
type quotaRun struct {
	took        time.Duration
	maxThrottle int64 // ms, from Sarama's throttle-time-in-ms
}

// produceAll sends quotaMsgs messages of quotaMsgSize with a Sarama
// SyncProducer using clientID.
func produceAll(t *testing.T, c *brokertest.Cluster, topic, clientID string) quotaRun {
	cfg, reg := quotaSaramaConfig(clientID)
	p := c.SyncProducer(t, cfg)
	val := make([]byte, quotaMsgSize)
	start := time.Now()
	for i := 0; i < quotaMsgs; i++ {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(val)}); err != nil {
			t.Errorf("%s: message %d: %v", clientID, i, err)
			break
		}
	}
	return quotaRun{took: time.Since(start), maxThrottle: saramaMaxThrottle(reg)}
}

// consumeAll reads quotaMsgs messages from the start of partition 0 with a
// Sarama consumer using clientID.
func consumeAll(t *testing.T, c *brokertest.Cluster, topic, clientID string) quotaRun {
	cfg, reg := quotaSaramaConfig(clientID)
	consumer, err := sarama.NewConsumerFromClient(c.Sarama(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	start := time.Now()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Errorf("%s: %v", clientID, err)
		return quotaRun{}
	}
	defer pc.Close()
	timeout := time.After(90 * time.Second)
	for n := 0; n < quotaMsgs; {
		select {
		case <-pc.Messages():
			n++
		case err := <-pc.Errors():
			t.Errorf("%s: %v", clientID, err)
			return quotaRun{}
		case <-timeout:
			t.Errorf("%s: %d of %d messages after 90 s", clientID, n, quotaMsgs)
			return quotaRun{}
		}
	}
	return quotaRun{took: time.Since(start), maxThrottle: saramaMaxThrottle(reg)}
}

// inParallel runs a slow and a fast client at the same time.
func inParallel(slow, fast func() quotaRun) (quotaRun, quotaRun) {
	var s, f quotaRun
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s = slow() }()
	go func() { defer wg.Done(); f = fast() }()
	wg.Wait()
	return s, f
}

func checkThrottled(t *testing.T, name string, r quotaRun) {
	t.Helper()
	t.Logf("%s: %v, max throttle %d ms", name, r.took, r.maxThrottle)
	if r.took < quotaMinDuration || r.took > 60*time.Second {
		t.Errorf("%s took %v, want between %v and 60s under a %d B/s quota", name, r.took, quotaMinDuration, quotaSmall)
	}
	if r.maxThrottle <= 0 {
		t.Errorf("%s: Sarama saw no throttle time", name)
	}
}

func checkUnthrottled(t *testing.T, name string, r quotaRun) {
	t.Helper()
	t.Logf("%s: %v, max throttle %d ms", name, r.took, r.maxThrottle)
	if r.took >= quotaMinDuration || r.maxThrottle != 0 {
		t.Errorf("%s took %v with throttle %d ms, want unthrottled", name, r.took, r.maxThrottle)
	}
}

// TestQuotaProduceByteRate: a producer_byte_rate set with
// AlterClientQuotas on client-id "slow" holds a Sarama producer to it
// (throttle times, no errors) while client-id "fast" produces unthrottled
// at the same time; removing the quota lifts the throttle, without a
// restart.
func TestQuotaProduceByteRate(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "q", 1, 1)
	checkByteRateQuota(t, c, "q", "producer_byte_rate", "slow", "fast",
		func(id string) quotaRun { return produceAll(t, c, "q", id) })
}

// TestQuotaFetchByteRate: the same for consumer_byte_rate and Sarama
// consumers fetching one partition.
func TestQuotaFetchByteRate(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "qc", 1, 1)
	produceAll(t, c, "qc", "filler")
	checkByteRateQuota(t, c, "qc", "consumer_byte_rate", "slowc", "fastc",
		func(id string) quotaRun { return consumeAll(t, c, "qc", id) })
}

// checkByteRateQuota: with quotaKey at quotaSmall for client slow, slow's
// run is throttled while fast's, beside it, is not; removing the quota
// lifts the throttle without a restart. Client "probe", throttled to 1 B/s
// on produce meanwhile, shows when a quota change is in force (a raw
// Produce v8 answer carries throttle_time_ms).
func checkByteRateQuota(t *testing.T, c *brokertest.Cluster, topic, quotaKey, slow, fast string, run func(clientID string) quotaRun) {
	t.Helper()
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	setClientQuota(t, admin, slow, quotaKey, quotaSmall)
	setClientQuota(t, admin, "probe", "producer_byte_rate", 1)
	awaitProbeThrottle(t, c, topic, true)

	slowRun, fastRun := inParallel(func() quotaRun { return run(slow) }, func() quotaRun { return run(fast) })
	checkThrottled(t, slow, slowRun)
	checkUnthrottled(t, fast, fastRun)

	setClientQuota(t, admin, slow, quotaKey, 0)
	setClientQuota(t, admin, "probe", "producer_byte_rate", 0)
	awaitProbeThrottle(t, c, topic, false)
	checkUnthrottled(t, slow+" without quota", run(slow))
}

// TestQuotaMutesConnection: over its quota a client's answer leaves at
// once with throttle_time_ms (KIP-219) and its connection reads nothing
// more until the throttle time has passed; an acks=0 produce, which has no
// answer, mutes the connection too (Kafka throttles it all the same). The
// client's byte-rate and throttle-time metrics are served under Kafka's
// names.
func TestQuotaMutesConnection(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("metrics.listener", "http://127.0.0.1:0"))
	c.CreateTopic(t, "qm", 1, 1)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	// A ~0.7 KB request against 50 B/s over a 10 s window: a throttle of a
	// few seconds.
	setClientQuota(t, admin, "mute-acks1", "producer_byte_rate", 50)
	setClientQuota(t, admin, "mute-acks0", "producer_byte_rate", 50)
	setClientQuota(t, admin, "probe", "producer_byte_rate", 1)
	awaitProbeThrottle(t, c, "qm", true)

	for _, acks := range []int16{1, 0} {
		client := "mute-acks1"
		if acks == 0 {
			client = "mute-acks0"
		}
		rc := dialQuotaConn(t, c.Addr(0), client)
		start := time.Now()
		preq := brokertest.QuotaProduce(t, "qm", acks)
		rc.write(preq)
		want := time.Second // acks=0: at least (512+)/10/50-1 ≈ 0.4 × 10 s
		if acks != 0 {
			resp := rc.read(preq).(*kmsg.ProduceResponse)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("acks=1: throttled answer took %v, want at once", d)
			}
			if resp.ThrottleMillis <= 0 {
				t.Fatalf("acks=1: throttle_time_ms %d", resp.ThrottleMillis)
			}
			want = time.Duration(resp.ThrottleMillis) * time.Millisecond * 8 / 10
		}
		md := kmsg.NewPtrMetadataRequest()
		md.SetVersion(1)
		rc.write(md)
		rc.read(md)
		if d := time.Since(start); d < want {
			t.Errorf("acks=%d: request behind the throttled one answered after %v, want >= %v", acks, d, want)
		}
	}
	for _, m := range []string{`kafka_server_produce_byte_rate{client_id="mute-acks1"}`,
		`kafka_server_produce_throttle_time{client_id="mute-acks0"}`} {
		if v, err := brokertest.ScrapeValue(c, 0, m); err != nil || v <= 0 {
			t.Errorf("%s = %v, %v; want > 0", m, v, err)
		}
	}
}

// quotaConn is a raw connection with a client id, writing and reading in
// lockstep.
type quotaConn struct {
	t        *testing.T
	rc       *brokertest.RawConn
	clientID string
	corr     int32
}

func dialQuotaConn(t *testing.T, addr, clientID string) *quotaConn {
	return &quotaConn{t: t, rc: brokertest.DialRaw(t, addr), clientID: clientID}
}

func (q *quotaConn) write(req kmsg.Request) {
	q.t.Helper()
	q.corr++
	if err := q.rc.Conn().SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		q.t.Fatal(err)
	}
	if _, err := q.rc.Conn().Write(wire.AppendRequest(nil, req, q.corr, &q.clientID)); err != nil {
		q.t.Fatal(err)
	}
}

func (q *quotaConn) read(req kmsg.Request) kmsg.Response {
	q.t.Helper()
	frame, err := wire.ReadFrame(q.rc.Conn(), 64<<20, nil)
	if err != nil {
		q.t.Fatal(err)
	}
	resp, err := wire.ParseResponse(frame, req, q.corr)
	if err != nil {
		q.t.Fatal(err)
	}
	return resp
}

// TestQuotaFollowersNeverThrottled: a consumer_byte_rate of 1 B/s on the
// default client-id throttles consumers but never the followers' fetches,
// so acks=all produces still complete at once; the default entity comes
// from /config/clients/<default>.
func TestQuotaFollowersNeverThrottled(t *testing.T) {
	c := brokertest.NewCluster(t, 2)
	c.CreateTopic(t, "qf", 1, 2)
	c.WaitForISR(t, "qf", 0, 2)
	admin := c.Admin(t, brokertest.SaramaConfig(sarama.V2_8_0_0))
	def := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityClientID, MatchType: sarama.QuotaMatchDefault}}
	if err := admin.AlterClientQuotas(def, sarama.ClientQuotasOp{Key: "consumer_byte_rate", Value: 1}, false); err != nil {
		t.Fatal(err)
	}
	setClientQuota(t, admin, "probe", "producer_byte_rate", 1)
	for i := 0; i < c.N(); i++ {
		brokertest.WaitFor(t, 20*time.Second, func() error {
			if rawProduceThrottleOn(t, c, i, "qf", "probe") <= 0 {
				return errWant(true)
			}
			return nil
		})
	}
	cfg, reg := quotaSaramaConfig("acks-all")
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p := c.SyncProducer(t, cfg)
	val := make([]byte, quotaMsgSize)
	start := time.Now()
	for i := 0; i < 128; i++ { // 1 MiB: at 1 B/s a throttled follower would take days
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "qf", Value: sarama.ByteEncoder(val)}); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if d := time.Since(start); d > 20*time.Second || saramaMaxThrottle(reg) != 0 {
		t.Fatalf("acks=all produce of 1 MiB took %v (throttle %d ms)", d, saramaMaxThrottle(reg))
	}
	// A consumer under the default quota is throttled.
	leader := c.Index(c.WaitForLeader(t, "qf", 0))
	resp := rawRoundTrip(t, c.Addr(leader), "some-consumer", brokertest.FetchRequest(-1, 0, "qf")).(*kmsg.FetchResponse)
	if resp.ThrottleMillis <= 0 || len(resp.Topics) != 0 {
		t.Fatalf("consumer fetch under 1 B/s: throttle %d ms, %d topics; want throttled and empty", resp.ThrottleMillis, len(resp.Topics))
	}
}

// rawProduceThrottleOn sends one small produce with clientID to broker i
// and returns the answer's throttle_time_ms (a broker that does not lead the
// partition answers NOT_LEADER, throttled all the same).
func rawProduceThrottleOn(t *testing.T, c *brokertest.Cluster, i int, topic, clientID string) int32 {
	t.Helper()
	resp := rawRoundTrip(t, c.Addr(i), clientID, brokertest.QuotaProduce(t, topic, 1)).(*kmsg.ProduceResponse)
	return resp.ThrottleMillis
}

// TestQuotaStaticDefaultAndWindowConfig: quota.producer.default throttles a
// client-id no dynamic quota names, and the throttle time follows Kafka's
// formula over quota.window.num samples of quota.window.size.seconds:
// one request of S bytes over the minimum window of (3-1) × 1 s observes
// S/2 B/s, so the throttle is (S/2 - 100) / 100 × 2000 ms.
func TestQuotaStaticDefaultAndWindowConfig(t *testing.T) {
	c := brokertest.NewCluster(t, 1, brokertest.WithProperty("quota.producer.default", "100"),
		brokertest.WithProperty("quota.window.num", "3"), brokertest.WithProperty("quota.window.size.seconds", "1"))
	c.CreateTopic(t, "qs", 1, 1)
	req := brokertest.QuotaProduce(t, "qs", 1)
	id := "static"
	size := float64(len(wire.AppendRequest(nil, req, 1, &id)) - 4)
	want := int32(math.Floor((size/2-100)/100*2000 + 0.5))
	resp := rawRoundTrip(t, c.Addr(0), id, req).(*kmsg.ProduceResponse)
	if resp.ThrottleMillis != want {
		t.Fatalf("throttle_time_ms %d for a %v-byte request, want %d", resp.ThrottleMillis, size, want)
	}
}

// TestQuotaUserEntitiesFromZooKeeper: quotas written straight to
// ZooKeeper with a /config/changes notification (as kafka-configs
// --zookeeper writes them) apply to the PLAINTEXT principal ANONYMOUS,
// with Kafka's precedence: users/ANONYMOUS/clients/vip beats
// users/ANONYMOUS for client-id vip only.
func TestQuotaUserEntitiesFromZooKeeper(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	c.CreateTopic(t, "qz", 1, 1)
	zk := c.Broker(0).ZooKeeper()
	set := func(typ, name, value string) {
		t.Helper()
		cfg := map[string]string{}
		if value != "" {
			cfg["producer_byte_rate"] = value
		}
		if err := zk.SetEntityConfig(typ, name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	throttled := func(client string, want bool) {
		t.Helper()
		brokertest.WaitFor(t, 20*time.Second, func() error {
			if got := rawProduceThrottle(t, c.Addr(0), "qz", client) > 0; got != want {
				return fmt.Errorf("client %s throttled %v, want %v", client, got, want)
			}
			return nil
		})
	}
	set(zkutil.ConfigTypeUser, "ANONYMOUS", "1")
	throttled("other", true)
	set(zkutil.ConfigTypeUser+"/ANONYMOUS/"+zkutil.ConfigTypeClient, "vip", "1000000000")
	throttled("vip", false)
	throttled("other2", true)
	set(zkutil.ConfigTypeUser, "ANONYMOUS", "") // quota removed, entity kept
	throttled("other3", false)
}
