package doctor

// samsa doctor's consumer group checks (--metrics-url): groups the
// coordinators report in a rebalance storm (more than
// samsa.group.rebalance.storm.count rebalances within
// samsa.group.rebalance.storm.window.ms), with the client that keeps
// causing it and the runbook's advice (docs/groups.md).

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"samsa/tools/groups"
	"samsa/tools/internal/tool"
)

// stormRunbook is the runbook's general advice, after the cause-specific one.
const stormRunbook = "the runbook (docs/groups.md, Rebalance storms): raise max.poll.interval.ms " +
	"(Sarama: Consumer.Group.Rebalance.Timeout), lower max.poll.records, use the cooperative-sticky " +
	"assignor, give consumers static membership (group.instance.id)"

func checkGroups(r *doctorReport, urls []string, timeout time.Duration) {
	section := "Consumer groups (metrics " + strings.Join(urls, ",") + ")"
	type storming struct {
		broker int32
		g      groups.RebalanceGroup
	}
	var storms []storming
	checked := 0
	for _, u := range urls {
		doc, err := groups.FetchRebalances(u, "", timeout)
		if err != nil {
			r.add(section, finding{sev: sevFail, summary: "cannot read the rebalance records: " + tool.UserMessage(err),
				fix: "give each broker's metrics.listener URL (http://host:port) and check the broker runs"})
			continue
		}
		for _, g := range doc.Groups {
			checked++
			if g.Storm != nil {
				storms = append(storms, storming{doc.Broker, g})
			}
		}
	}
	sort.Slice(storms, func(i, j int) bool { return storms[i].g.Group < storms[j].g.Group })
	for _, s := range storms {
		st := s.g.Storm
		f := finding{sev: sevWarn,
			summary: fmt.Sprintf("group %s is in a rebalance storm: %d rebalances within %v (coordinator %d)",
				s.g.Group, st.Rebalances, time.Duration(st.WindowMs)*time.Millisecond, s.broker),
			details: []string{"cause: " + st.Cause},
			fix:     st.Advice + "; in general, " + stormRunbook}
		rs := s.g.Rebalances
		for i := max(0, len(rs)-3); i < len(rs); i++ {
			f.details = append(f.details, fmt.Sprintf("generation %d: %s: %s", rs[i].Generation, rs[i].Reason, rs[i].Detail))
		}
		r.add(section, f)
	}
	if len(storms) == 0 {
		r.ok(section, "no consumer group in a rebalance storm (%d groups with rebalances checked)", checked)
	}
}
