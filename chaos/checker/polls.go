package checker

import (
	"fmt"
	"sort"

	"samsa/chaos/history"
)

// checkPolls checks the group consumers' polls against the final read and
// the group's commits.
func checkPolls(ops []history.Op, r *Result, sends map[string]*sendInfo, final map[pos]string, keys []pos) {
	pc := &pollChecker{r: r, sends: sends, final: final, offsets: map[int32][]int64{}, polledValues: map[string]bool{},
		commits: newGroupCommits(), cursors: map[string]*pollCursor{}}
	for _, k := range keys {
		pc.offsets[k.p] = append(pc.offsets[k.p], k.o)
	}
	for _, op := range ops {
		id := fmt.Sprintf("%s/%d", op.Process, op.Partition)
		switch op.F {
		case history.Commit:
			pc.commits.add(op)
		case history.Assign:
			pc.cursors[id] = &pollCursor{}
		case history.Revoke:
			delete(pc.cursors, id)
		case history.Poll:
			if op.Type == history.OK {
				pc.poll(op, id)
			}
		}
	}
	for _, op := range ops {
		if op.F == history.Drained && op.Type == history.OK {
			r.Drained = true
		}
	}
	pc.unseen()
}

// pollChecker is checkPolls' state while it walks the history.
type pollChecker struct {
	r            *Result
	sends        map[string]*sendInfo
	final        map[pos]string
	offsets      map[int32][]int64 // partition -> sorted offsets of the final read
	polledValues map[string]bool   // values polled so far, by any member
	commits      *groupCommits
	cursors      map[string]*pollCursor // proc/partition, reset by assign
}

// pollCursor is a member's position in a partition since its assign.
type pollCursor struct {
	last    int64
	started bool
}

// holds reports whether the final read holds an offset in [from, to).
func (pc *pollChecker) holds(p int32, from, to int64) bool {
	os := pc.offsets[p]
	i := sort.Search(len(os), func(i int) bool { return os[i] >= from })
	return i < len(os) && os[i] < to
}

// unpolled describes the records of [from, to) no member polled yet: a
// skip the history explains (another member read them, its commit
// unrecorded) or one that hides data from the group.
func (pc *pollChecker) unpolled(p int32, from, to int64) string {
	os := pc.offsets[p]
	n, first := 0, int64(-1)
	for i := sort.Search(len(os), func(i int) bool { return os[i] >= from }); i < len(os) && os[i] < to; i++ {
		if !pc.polledValues[pc.final[pos{p, os[i]}]] {
			if n == 0 {
				first = os[i]
			}
			n++
		}
	}
	if n == 0 {
		return "every record skipped was polled before"
	}
	return fmt.Sprintf("%d records skipped never polled before, the first at %d", n, first)
}

// poll checks one successful poll of member/partition id: its value, then
// its offset against the member's cursor.
func (pc *pollChecker) poll(op history.Op, id string) {
	pc.r.Polled++
	pc.polledValues[op.Value] = true
	pc.pollValue(op)
	c := pc.cursors[id]
	if c == nil { // a poll without an assign: start a cursor, no committed check
		pc.cursors[id] = &pollCursor{started: true, last: op.Offset}
		return
	}
	if !c.started {
		pc.firstPoll(op)
		c.started, c.last = true, op.Offset
		return
	}
	r := pc.r
	switch {
	case op.Offset <= c.last:
		r.NonmonotonicPolls = append(r.NonmonotonicPolls, Anomaly{Kind: "nonmonotonic-poll", Value: op.Value, Process: op.Process,
			Partition: op.Partition, Offset: op.Offset, Detail: fmt.Sprintf("after offset %d", c.last)})
	case op.Offset > c.last+1 && pc.holds(op.Partition, c.last+1, op.Offset):
		r.PollSkips = append(r.PollSkips, Anomaly{Kind: "poll-skip", Value: op.Value, Process: op.Process,
			Partition: op.Partition, Offset: op.Offset, Detail: fmt.Sprintf("after offset %d", c.last)})
	}
	c.last = op.Offset
}

// pollValue checks a polled value against the sends and the final read.
func (pc *pollChecker) pollValue(op history.Op) {
	r := pc.r
	s, sent := pc.sends[op.Value]
	switch {
	case !sent:
		r.Phantoms = append(r.Phantoms, Anomaly{Kind: "phantom", Value: op.Value, Process: op.Process,
			Partition: op.Partition, Offset: op.Offset, Detail: "polled, never sent"})
	case s.outcome == history.Fail:
		r.AbortedReads = append(r.AbortedReads, Anomaly{Kind: "aborted-read", Value: op.Value, Process: op.Process,
			Partition: op.Partition, Offset: op.Offset, Detail: "polled a value whose send failed definitely"})
	}
	if fv, ok := pc.final[pos{op.Partition, op.Offset}]; ok && fv != op.Value {
		r.InconsistentOffsets = append(r.InconsistentOffsets, Anomaly{Kind: "inconsistent-offset", Value: op.Value,
			Process: op.Process, Partition: op.Partition, Offset: op.Offset, Detail: fmt.Sprintf("polled; final read has %q", fv)})
	}
}

// firstPoll checks a member's first poll after an assign against the
// group's commits: it must not skip records the final read holds.
func (pc *pollChecker) firstPoll(op history.Op) {
	from, past, why := pc.commits.start(op.Partition, op.Offset)
	switch {
	case past && pc.holds(op.Partition, from, op.Offset):
		pc.r.CommittedSkips = append(pc.r.CommittedSkips, Anomaly{Kind: "committed-skip", Value: op.Value, Process: op.Process,
			Partition: op.Partition, Offset: op.Offset, Detail: "first poll after assign, " + why + "; " +
				pc.unpolled(op.Partition, from, op.Offset)})
	case past && pc.holds(op.Partition, pc.commits.definite[op.Partition], op.Offset):
		pc.r.ResumedIndeterminate++
	}
}

// unseen counts the acknowledged values no member polled, and reports them
// as undelivered when the group caught up to the end.
func (pc *pollChecker) unseen() {
	r := pc.r
	values := make([]string, 0, len(pc.sends))
	for v := range pc.sends {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		if s := pc.sends[v]; s.outcome == history.OK && !pc.polledValues[v] {
			r.Unseen++
			if r.Drained {
				r.Undelivered = append(r.Undelivered, Anomaly{Kind: "undelivered", Value: v, Process: s.proc, Partition: s.ack.p,
					Offset: s.ack.o, Detail: "acknowledged, never polled by the group although it caught up to the end"})
			}
		}
	}
}
