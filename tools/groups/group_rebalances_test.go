package groups

import (
	"bytes"
	"strings"
	"testing"

	"samsa/tools/internal/tool"
	"samsa/tools/internal/tooltest"
)

// --describe --state --verbose's addition: one line per rebalance with
// Kafka-style padded columns, then the storm.
func TestToolGroupRebalancesPrint(t *testing.T) {
	srv := tooltest.RebalancesServer(t, RebalancesPath)
	var out bytes.Buffer
	if err := printRebalances(tool.Env{Stdout: &out}, "busy", MetricsURLs(strings.TrimPrefix(srv.URL, "http://"))); err != nil {
		t.Fatal(err)
	}
	want := "\nGROUP           GENERATION  TIME                     REASON                     DETAIL" +
		"\nbusy            6           2026-12-01T10:59:58.000Z max_poll_interval_expired  Adding new member s-9 with group instance id None (client.id s, host /10.0.0.2)\n" +
		"\nREBALANCE STORM: 6 rebalances within 10m0s; member s-8 (client.id s, host /10.0.0.2) exceeded max.poll.interval.ms (the rebalance timeout) while still heartbeating 3 times: processing slower than the poll interval; raise max.poll.interval.ms\n"
	if out.String() != want {
		t.Fatalf("got:\n%q\nwant:\n%q", out.String(), want)
	}
	out.Reset()
	if err := printRebalances(tool.Env{Stdout: &out}, "unknown", []string{srv.URL}); err != nil || !strings.Contains(out.String(), "has no rebalance recorded") {
		t.Fatalf("unknown group: %q %v", out.String(), err)
	}
	if err := printRebalances(tool.Env{Stdout: &out}, "busy", []string{"http://127.0.0.1:1"}); err == nil {
		t.Fatal("unreachable metrics URL: no error")
	}
}

// FuzzRebalancesDoc: whatever a (possibly hostile) metrics endpoint sends,
// decoding and printing neither panics nor misbehaves.
func FuzzRebalancesDoc(f *testing.F) {
	f.Add([]byte(tooltest.RebalancesFixture))
	f.Add([]byte(`{"groups":[{"group":"g","storm":{"window_ms":-1}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := DecodeRebalancesDoc(body)
		if err != nil {
			return
		}
		for i := range doc.Groups {
			g := &doc.Groups[i]
			out := formatRebalances(g.Group, g)
			if want := len(g.Rebalances) + 1; strings.Count(out, "\n"+g.Group) < want-1 && g.Group != "" {
				t.Fatalf("%d rebalances, output:\n%s", len(g.Rebalances), out)
			}
		}
	})
}
