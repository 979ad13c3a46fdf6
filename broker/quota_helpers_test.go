package broker_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
	"samsa/broker/wire"
)

// quotaSmall is the byte-rate quota of the throttling tests: with Kafka's
// 11 one-second samples a client may burst about 10-11 × quotaSmall before
// its first throttle, and then waits until that burst's sample expires
// (11 s after it started) or the window has stretched enough.
const quotaSmall = 256 << 10

// quotaPayload is what each throttling test moves: ~16 × quotaSmall, well
// beyond the burst, so the quota must hold the client back for seconds.
const (
	quotaMsgSize = 8 << 10
	quotaMsgs    = 512 // 4 MiB
)

// quotaMinDuration is the lower bound asserted for moving quotaPayload at
// quotaSmall: the payload beyond an 11-window burst at the quota, with
// margin for the burst's sample rounding. 4 MiB/256 KiB/s - 11 s = 5 s;
// asserted with 20% margin.
const quotaMinDuration = 4 * time.Second

// setClientQuota sets (value > 0) or removes (value 0) a client-id quota
// with AlterClientQuotas.
func setClientQuota(t *testing.T, admin sarama.ClusterAdmin, client, key string, value float64) {
	t.Helper()
	ent := []sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityClientID, MatchType: sarama.QuotaMatchExact, Name: client}}
	op := sarama.ClientQuotasOp{Key: key, Value: value}
	if value == 0 {
		op = sarama.ClientQuotasOp{Key: key, Remove: true}
	}
	if err := admin.AlterClientQuotas(ent, op, false); err != nil {
		t.Fatalf("AlterClientQuotas %s %s=%v: %v", client, key, value, err)
	}
}

// rawProduceThrottle sends one small Produce v8 (acks=1) with clientID on a
// fresh connection and returns the answer's throttle_time_ms.
func rawProduceThrottle(t *testing.T, addr, topic, clientID string) int32 {
	t.Helper()
	req := brokertest.QuotaProduce(t, topic, 1)
	resp := rawRoundTrip(t, addr, clientID, req).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("raw produce answered %+v", resp.Topics)
	}
	return resp.ThrottleMillis
}

// rawRoundTrip sends req with clientID on a fresh connection.
func rawRoundTrip(t testing.TB, addr, clientID string, req kmsg.Request) kmsg.Response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(wire.AppendRequest(nil, req, 1, &clientID)); err != nil {
		t.Fatal(err)
	}
	frame, err := wire.ReadFrame(c, 64<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := wire.ParseResponse(frame, req, 1)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// awaitProbeThrottle waits until a raw produce by the probe client (quota
// 1 B/s) is throttled (want true) or not (want false): the broker has then
// applied every quota change written before the probe's.
func awaitProbeThrottle(t *testing.T, c *brokertest.Cluster, topic string, want bool) {
	t.Helper()
	brokertest.WaitFor(t, 20*time.Second, func() error {
		if got := rawProduceThrottle(t, c.Addr(0), topic, "probe") > 0; got != want {
			return errWant(want)
		}
		return nil
	})
}

type errWant bool

func (e errWant) Error() string {
	if e {
		return "probe not throttled yet"
	}
	return "probe still throttled"
}

// saramaMaxThrottle returns the largest throttle time Sarama recorded in
// reg (its throttle-time-in-ms histograms, one per broker).
func saramaMaxThrottle(reg metrics.Registry) int64 {
	var m int64
	reg.Each(func(name string, v any) {
		if h, ok := v.(metrics.Histogram); ok && strings.HasPrefix(name, "throttle-time-in-ms") {
			m = max(m, h.Max())
		}
	})
	return m
}

// quotaSaramaConfig is a Sarama 2.8 config with clientID and its own
// metric registry.
func quotaSaramaConfig(clientID string) (*sarama.Config, metrics.Registry) {
	cfg := brokertest.SaramaConfig(sarama.V2_8_0_0)
	cfg.ClientID = clientID
	cfg.MetricRegistry = metrics.NewRegistry()
	return cfg, cfg.MetricRegistry
}
