package tools

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rebalancesFixture is a /groups/rebalances document as a broker serves
// it (field names of broker.RebalancesDoc).
const rebalancesFixture = `{"broker":1,"time":"2026-12-01T11:00:00Z","groups":[
 {"group":"calm","state":"Stable","generation":1,"counts":{"member_joined":1},
  "rebalances":[{"time":"2026-12-01T10:59:00.5Z","generation":0,"reason":"member_joined","member_id":"c-1","client_id":"c","client_host":"/10.0.0.1","detail":"Adding new member c-1 with group instance id None"}]},
 {"group":"busy","state":"PreparingRebalance","generation":7,"counts":{"max_poll_interval_expired":6},
  "rebalances":[{"time":"2026-12-01T10:59:58Z","generation":6,"reason":"max_poll_interval_expired","member_id":"s-9","client_id":"s","client_host":"/10.0.0.2","detail":"Adding new member s-9 with group instance id None"}],
  "storm":{"rebalances":6,"window_ms":600000,"member_id":"s-8","client_id":"s","client_host":"/10.0.0.2","reason":"max_poll_interval_expired","times":3,
   "cause":"member s-8 (client.id s, host /10.0.0.2) exceeded max.poll.interval.ms (the rebalance timeout) while still heartbeating 3 times: processing slower than the poll interval",
   "advice":"raise max.poll.interval.ms"}}]}`

func rebalancesServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != groupRebalancesPath {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(rebalancesFixture))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// --describe --state --verbose's addition: one line per rebalance with
// Kafka-style padded columns, then the storm.
func TestToolGroupRebalancesPrint(t *testing.T) {
	srv := rebalancesServer(t)
	var out bytes.Buffer
	if err := printRebalances(Env{Stdout: &out}, "busy", metricsURLs(strings.TrimPrefix(srv.URL, "http://"))); err != nil {
		t.Fatal(err)
	}
	want := "\nGROUP           GENERATION  TIME                     REASON                     DETAIL" +
		"\nbusy            6           2026-12-01T10:59:58.000Z max_poll_interval_expired  Adding new member s-9 with group instance id None (client.id s, host /10.0.0.2)\n" +
		"\nREBALANCE STORM: 6 rebalances within 10m0s; member s-8 (client.id s, host /10.0.0.2) exceeded max.poll.interval.ms (the rebalance timeout) while still heartbeating 3 times: processing slower than the poll interval; raise max.poll.interval.ms\n"
	if out.String() != want {
		t.Fatalf("got:\n%q\nwant:\n%q", out.String(), want)
	}
	out.Reset()
	if err := printRebalances(Env{Stdout: &out}, "unknown", []string{srv.URL}); err != nil || !strings.Contains(out.String(), "has no rebalance recorded") {
		t.Fatalf("unknown group: %q %v", out.String(), err)
	}
	if err := printRebalances(Env{Stdout: &out}, "busy", []string{"http://127.0.0.1:1"}); err == nil {
		t.Fatal("unreachable metrics URL: no error")
	}
}

// samsa-doctor --metrics-url: a WARN for the storming group with its cause
// and the advice, nothing for the calm one; an unreachable URL is a FAIL.
func TestToolDoctorGroups(t *testing.T) {
	srv := rebalancesServer(t)
	r := &doctorReport{}
	checkGroups(r, []string{srv.URL}, 5*time.Second)
	var out bytes.Buffer
	r.write(&out)
	got := out.String()
	for _, want := range []string{
		"[WARN] group busy is in a rebalance storm: 6 rebalances within 10m0s (coordinator 1)",
		"cause: member s-8 (client.id s, host /10.0.0.2) exceeded max.poll.interval.ms",
		"generation 6: max_poll_interval_expired: Adding new member s-9",
		"fix: raise max.poll.interval.ms; in general, the runbook",
		"1 problem(s) found.",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("doctor output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "calm") {
		t.Fatalf("calm group listed:\n%s", got)
	}
	r = &doctorReport{}
	checkGroups(r, []string{"http://127.0.0.1:1"}, time.Second)
	if r.problems() != 1 || r.findings[r.sections[0]][0].sev != sevFail {
		t.Fatalf("unreachable: %+v", r.findings)
	}
}

// FuzzRebalancesDoc: whatever a (possibly hostile) metrics endpoint sends,
// decoding and printing neither panics nor misbehaves.
func FuzzRebalancesDoc(f *testing.F) {
	f.Add([]byte(rebalancesFixture))
	f.Add([]byte(`{"groups":[{"group":"g","storm":{"window_ms":-1}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := decodeRebalancesDoc(body)
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
