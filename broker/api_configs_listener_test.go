package broker_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// describeBroker sends DescribeConfigs (with synonyms) for broker resource
// name and returns its entries by name.
func describeBroker(t *testing.T, rc *brokertest.RawConn, name string) map[string]kmsg.DescribeConfigsResponseResourceConfig {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(3)
	req.IncludeSynonyms = true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, name
	req.Resources = append(req.Resources, res)
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.DescribeConfigsResponse).Resources[0]
	if r.ErrorCode != 0 {
		t.Fatalf("DescribeConfigs %q: error %d", name, r.ErrorCode)
	}
	out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range r.Configs {
		out[c.Name] = c
	}
	return out
}

// TestAPIDescribeListenerConfigs: DescribeConfigs of a broker lists the
// listener overrides as Kafka 2.8 does: a dynamic
// listener.name.<l>.max.connections under its full name with source
// DYNAMIC_BROKER_CONFIG, its synonyms its own dynamic and static values
// and then the base key's default; the cluster-default resource shows its
// own dynamic override only.
func TestAPIDescribeListenerConfigs(t *testing.T) {
	c := brokertest.NewCluster(t, 1, withClientListener(
		brokertest.WithProperty("listener.name.client.max.connections", "50"))...)
	admin := brokertest.DialRaw(t, c.Addr(0))
	id := strconv.Itoa(int(c.Broker(0).ID()))
	const key = "listener.name.client.max.connections"
	if e := describeBroker(t, admin, id)[key]; e.Value == nil || *e.Value != "50" || e.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("static %s described as %+v", key, e)
	}
	if code, msg := alterBroker(t, admin, id, map[string]string{key: "7"}); code != 0 {
		t.Fatalf("%d %s", code, msg)
	}
	if code, msg := alterBroker(t, admin, "", map[string]string{key: "9"}); code != 0 {
		t.Fatalf("%d %s", code, msg)
	}
	e, ok := describeBroker(t, admin, id)[key]
	if !ok || e.Value == nil || *e.Value != "7" || e.Source != kmsg.ConfigSourceDynamicBrokerConfig || e.ReadOnly {
		t.Fatalf("%s described as %+v", key, e)
	}
	var syn []string
	for _, s := range e.ConfigSynonyms {
		v := "null"
		if s.Value != nil {
			v = *s.Value
		}
		syn = append(syn, s.Name+"="+v+"@"+s.Source.String())
	}
	want := key + "=7@DYNAMIC_BROKER_CONFIG " + key + "=9@DYNAMIC_DEFAULT_BROKER_CONFIG " + key + "=50@STATIC_BROKER_CONFIG " +
		"max.connections=2147483647@DEFAULT_CONFIG"
	if got := strings.Join(syn, " "); got != want {
		t.Fatalf("synonyms\n got %s\nwant %s", got, want)
	}
	d, ok := describeBroker(t, admin, "")[key]
	if !ok || d.Value == nil || *d.Value != "9" || d.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("cluster default %s described as %+v", key, d)
	}
}
