package checker

import (
	"fmt"
	"sort"
	"strings"

	"samsa/chaos/history"
)

// groupCommits is what the history says about the group's committed offset
// of each partition at one point of the history.
//
// An OffsetCommit acknowledged "ok" is applied for certain; one that
// completed "fail" was refused for certain. One still in flight, or
// completed "info" (timed out, connection lost, the coordinator moved
// while appending, or any error after the client retried), may or may not
// be applied, now or later: its append to __consumer_offsets can survive in
// the log and be loaded by the next coordinator. A member newly assigned a partition starts
// at the group's committed offset, which is therefore the highest definite
// commit or any of the possible ones.
type groupCommits struct {
	definite map[int32]int64            // partition -> highest ok commit
	inflight map[int32]map[string]int64 // partition -> process -> offset invoked, not yet completed
	possible map[int32]map[int64]string // partition -> offset of an info commit -> process
}

func newGroupCommits() *groupCommits {
	return &groupCommits{definite: map[int32]int64{}, inflight: map[int32]map[string]int64{}, possible: map[int32]map[int64]string{}}
}

// add applies one commit op. A member has at most one commit of a
// partition in flight (the workload commits synchronously), so process
// and partition name it from its invoke to its completion.
func (g *groupCommits) add(op history.Op) {
	p := op.Partition
	if op.Type != history.Invoke {
		delete(g.inflight[p], op.Process)
	}
	switch op.Type {
	case history.Invoke:
		if g.inflight[p] == nil {
			g.inflight[p] = map[string]int64{}
		}
		g.inflight[p][op.Process] = op.Offset
	case history.OK:
		if op.Offset > g.definite[p] {
			g.definite[p] = op.Offset
		}
	case history.Info:
		if g.possible[p] == nil {
			g.possible[p] = map[int64]string{}
		}
		g.possible[p][op.Offset] = op.Process
	}
}

// start is the committed offset a member first polling partition p at
// offset o may have started from: the highest candidate (the definite
// commit, or a possible one above it) not above o. past is false when o is
// not past the definite commit (re-reading is never a skip). why names the
// candidates, for the anomaly's detail.
func (g *groupCommits) start(p int32, o int64) (from int64, past bool, why string) {
	from = g.definite[p]
	if o <= from {
		return from, false, ""
	}
	var cands []string
	consider := func(c int64, who string) {
		if c <= g.definite[p] {
			return
		}
		cands = append(cands, fmt.Sprintf("%d (%s)", c, who))
		if c <= o && c > from {
			from = c
		}
	}
	for c, who := range g.possible[p] {
		consider(c, who+", indeterminate")
	}
	for who, c := range g.inflight[p] {
		consider(c, who+", in flight")
	}
	sort.Strings(cands)
	why = fmt.Sprintf("committed offset %d", g.definite[p])
	if len(cands) > 0 {
		why += ", possibly " + strings.Join(cands, ", ")
	}
	return from, true, why
}
