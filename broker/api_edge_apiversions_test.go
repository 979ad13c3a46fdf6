package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// TestAPIEdgeApiVersionsSoftwareName: KIP-511 and Kafka 2.8's
// ApiVersionsRequest.isValid: from v3 the client software name and version
// must match [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?. KafkaApis answers
// an invalid one with getErrorResponse(INVALID_REQUEST): a body at the
// request's version with error 42 and no api keys (only
// UNSUPPORTED_VERSION lists ApiVersions' range), and the connection stays
// open. Names real clients send pass.
func TestAPIEdgeApiVersionsSoftwareName(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	rc := brokertest.DialRaw(t, c.Addr(0))
	ask := func(v int16, name, version string) *kmsg.ApiVersionsResponse {
		t.Helper()
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(v)
		req.ClientSoftwareName, req.ClientSoftwareVersion = name, version
		kr, err := rc.RoundTrip(req) // decoded at v: a v0 body would not parse as v3
		if err != nil {
			t.Fatalf("v%d %q %q: %v", v, name, version, err)
		}
		return kr.(*kmsg.ApiVersionsResponse)
	}
	invalid := [][2]string{
		{"", "1.0"},
		{"kgo", ""},
		{"-kgo", "1.0"},
		{"kgo", "1.0-"},
		{".kgo", "1"},
		{"my client", "1.0"},
		{"kgo", "v1.2.3+build"},
		{"kgo_x", "1"},
		{"caf\u00e9", "1"},
		{"kgo\n", "1"},
	}
	for _, nv := range invalid {
		resp := ask(3, nv[0], nv[1])
		if resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0 || resp.ThrottleMillis != 0 {
			t.Errorf("%q %q: error %d, %d api keys, throttle %d; want INVALID_REQUEST (42), none, 0",
				nv[0], nv[1], resp.ErrorCode, len(resp.ApiKeys), resp.ThrottleMillis)
		}
	}
	valid := [][2]string{
		{"a", "1"},
		{"apache-kafka-java", "2.8.0"},
		{"librdkafka", "2.3.0"},
		{"confluent-kafka-python", "2.3.0-rdkafka-2.3.0"},
		{"kgo", "v1.18.1"},
		{"sarama", "v1.61.1"},
		{"samsa", "1.0"},
		{"A.b-9", "0"},
	}
	for _, nv := range valid {
		resp := ask(3, nv[0], nv[1])
		if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			t.Errorf("%q %q: error %d with %d api keys, want 0 and the table", nv[0], nv[1], resp.ErrorCode, len(resp.ApiKeys))
		}
	}
	// v0-2 carry no software fields, so nothing is checked.
	for v := int16(0); v <= 2; v++ {
		if resp := ask(v, "", ""); resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			t.Errorf("v%d: error %d with %d api keys", v, resp.ErrorCode, len(resp.ApiKeys))
		}
	}

	// franz-go sends v3 with its own name and version (by default "kgo"
	// and its module version) and must keep working end to end.
	c.CreateTopic(t, "edge", 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, opts := range [][]kgo.Opt{
		nil,
		{kgo.SoftwareNameAndVersion("samsa-edge-test", "1.2.3")},
	} {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("edge")}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			cl.Close()
			t.Fatalf("kgo produce: %v", err)
		}
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
		cl.Close()
		if err != nil || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			t.Fatalf("kgo ApiVersions: %v %+v", err, resp)
		}
	}
}
