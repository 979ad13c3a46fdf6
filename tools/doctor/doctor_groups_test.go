package doctor

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"samsa/tools/groups"
	"samsa/tools/internal/tooltest"
)

// samsa-doctor --metrics-url: a WARN for the storming group with its cause
// and the advice, nothing for the calm one; an unreachable URL is a FAIL.
func TestToolDoctorGroups(t *testing.T) {
	srv := tooltest.RebalancesServer(t, groups.RebalancesPath)
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
