package broker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/brokertest"
)

// alterIPQuota sends one AlterClientQuotas entry for the given entity
// (type, name pairs; a nil name is the default) and returns its error.
func alterIPQuota(t *testing.T, rc *brokertest.RawConn, entity [][2]*string, key string, value float64, remove bool) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	en := kmsg.NewAlterClientQuotasRequestEntry()
	for _, p := range entity {
		en.Entity = append(en.Entity, kmsg.AlterClientQuotasRequestEntryEntity{Type: *p[0], Name: p[1]})
	}
	en.Ops = append(en.Ops, kmsg.AlterClientQuotasRequestEntryOp{Key: key, Value: value, Remove: remove})
	req.Entries = append(req.Entries, en)
	resp, err := rc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	e := resp.(*kmsg.AlterClientQuotasResponse).Entries[0]
	msg := ""
	if e.ErrorMessage != nil {
		msg = *e.ErrorMessage
	}
	return e.ErrorCode, msg
}

// throttledFrom opens n connections from ip to addr in a row and returns
// how many the broker closed unanswered.
func throttledFrom(t *testing.T, ip, addr string, n int) int {
	closed := 0
	for i := 0; i < n; i++ {
		if !dialFrom(t, ip, addr).ask(20 * time.Second) {
			closed++
		}
	}
	return closed
}

func sp(s string) *string { return &s }

// TestAPIIPConnectionRateQuota: KIP-612's connection_creation_rate on ip
// entities, as Kafka 2.8: AlterClientQuotas validates the entity and the
// value with Kafka's errors, stores it in /config/ips, the running broker
// closes the connections an address opens above its rate (others are not
// held), DescribeClientQuotas lists it, and removing it lifts the quota.
func TestAPIIPConnectionRateQuota(t *testing.T) {
	c := brokertest.NewCluster(t, 1)
	admin := brokertest.DialRaw(t, c.Addr(0))
	ipType, userType := "ip", "user"
	limited := [][2]*string{{&ipType, sp("127.0.0.2")}}
	for _, bad := range []struct {
		entity [][2]*string
		key    string
		value  float64
		want   string
	}{
		{[][2]*string{{&ipType, sp("127.0.0.2")}, {&userType, sp("u")}}, "connection_creation_rate", 1, "IP entity should not be combined"},
		{[][2]*string{{&ipType, sp("example.invalid")}}, "connection_creation_rate", 1, "example.invalid is not a valid IP or resolvable host."},
		{limited, "producer_byte_rate", 1, "Invalid configuration key producer_byte_rate"},
		{limited, "connection_creation_rate", 1.5, "must be a INT value"},
		{limited, "connection_creation_rate", -1, "Value must be at least 0"},
	} {
		if code, msg := alterIPQuota(t, admin, bad.entity, bad.key, bad.value, false); code != kerr.InvalidRequest.Code || !strings.Contains(msg, bad.want) {
			t.Errorf("%s=%v: %d %q, want INVALID_REQUEST %q", bad.key, bad.value, code, msg, bad.want)
		}
	}
	if code, msg := alterIPQuota(t, admin, limited, "connection_creation_rate", 1, false); code != 0 {
		t.Fatalf("setting the quota: %d %s", code, msg)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if n := throttledFrom(t, "127.0.0.2", c.Addr(0), 3); n == 0 {
			return fmt.Errorf("no connection from 127.0.0.2 closed at 1/s")
		}
		return nil
	})
	if n := throttledFrom(t, "127.0.0.3", c.Addr(0), 5); n != 0 {
		t.Fatalf("%d connections closed from an address without a quota", n)
	}

	describe := func(comps ...kmsg.DescribeClientQuotasRequestComponent) []kmsg.DescribeClientQuotasResponseEntry {
		req := kmsg.NewPtrDescribeClientQuotasRequest()
		req.Components = comps
		resp, err := admin.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		r := resp.(*kmsg.DescribeClientQuotasResponse)
		if r.ErrorCode != 0 {
			t.Fatalf("DescribeClientQuotas: %d", r.ErrorCode)
		}
		return r.Entries
	}
	all := describe()
	if len(all) != 1 || all[0].Entity[0].Type != "ip" || *all[0].Entity[0].Name != "127.0.0.2" ||
		all[0].Values[0].Key != "connection_creation_rate" || all[0].Values[0].Value != 1 {
		t.Fatalf("DescribeClientQuotas: %+v", all)
	}
	if got := describe(kmsg.DescribeClientQuotasRequestComponent{EntityType: "ip", MatchType: kmsg.QuotasMatchTypeDefault}); len(got) != 0 {
		t.Fatalf("default ip filter: %+v", got)
	}
	if got := describe(kmsg.DescribeClientQuotasRequestComponent{EntityType: "user", MatchType: kmsg.QuotasMatchTypeAny}); len(got) != 0 {
		t.Fatalf("user filter lists ip entities: %+v", got)
	}

	if code, msg := alterIPQuota(t, admin, limited, "connection_creation_rate", 0, true); code != 0 {
		t.Fatalf("removing the quota: %d %s", code, msg)
	}
	brokertest.WaitFor(t, 30*time.Second, func() error {
		if n := throttledFrom(t, "127.0.0.2", c.Addr(0), 3); n != 0 {
			return fmt.Errorf("%d connections from 127.0.0.2 still closed", n)
		}
		return nil
	})
}
