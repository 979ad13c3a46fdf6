package checker

import (
	"fmt"
	"sort"

	"samsa/chaos/history"
)

// checkPolls checks the group consumers' polls against the final read and
// the group's commits.
func checkPolls(ops []history.Op, r *Result, sends map[string]*sendInfo, final map[pos]string, keys []pos) {
	offsets := map[int32][]int64{} // partition -> sorted offsets of the final read
	for _, k := range keys {
		offsets[k.p] = append(offsets[k.p], k.o)
	}
	// any reports whether the final read holds an offset in [from, to).
	holds := func(p int32, from, to int64) bool {
		os := offsets[p]
		i := sort.Search(len(os), func(i int) bool { return os[i] >= from })
		return i < len(os) && os[i] < to
	}
	polledValues := map[string]bool{} // values polled so far, by any member
	// unpolled describes the records of [from, to) no member polled yet:
	// a skip the history explains (another member read them, its commit
	// unrecorded) or one that hides data from the group.
	unpolled := func(p int32, from, to int64) string {
		os := offsets[p]
		n, first := 0, int64(-1)
		for i := sort.Search(len(os), func(i int) bool { return os[i] >= from }); i < len(os) && os[i] < to; i++ {
			if !polledValues[final[pos{p, os[i]}]] {
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
	type cursor struct {
		last    int64
		started bool
	}
	commits := newGroupCommits()
	cursors := map[string]*cursor{} // proc/partition, reset by assign
	for _, op := range ops {
		id := fmt.Sprintf("%s/%d", op.Process, op.Partition)
		switch op.F {
		case history.Commit:
			commits.add(op)
		case history.Assign:
			cursors[id] = &cursor{}
		case history.Revoke:
			delete(cursors, id)
		case history.Poll:
			if op.Type != history.OK {
				continue
			}
			r.Polled++
			polledValues[op.Value] = true
			s, sent := sends[op.Value]
			switch {
			case !sent:
				r.Phantoms = append(r.Phantoms, Anomaly{Kind: "phantom", Value: op.Value, Process: op.Process,
					Partition: op.Partition, Offset: op.Offset, Detail: "polled, never sent"})
			case s.outcome == history.Fail:
				r.AbortedReads = append(r.AbortedReads, Anomaly{Kind: "aborted-read", Value: op.Value, Process: op.Process,
					Partition: op.Partition, Offset: op.Offset, Detail: "polled a value whose send failed definitely"})
			}
			if fv, ok := final[pos{op.Partition, op.Offset}]; ok && fv != op.Value {
				r.InconsistentOffsets = append(r.InconsistentOffsets, Anomaly{Kind: "inconsistent-offset", Value: op.Value,
					Process: op.Process, Partition: op.Partition, Offset: op.Offset, Detail: fmt.Sprintf("polled; final read has %q", fv)})
			}
			c := cursors[id]
			if c == nil { // a poll without an assign: start a cursor, no committed check
				c = &cursor{started: true, last: op.Offset}
				cursors[id] = c
				continue
			}
			if !c.started {
				from, past, why := commits.start(op.Partition, op.Offset)
				switch {
				case past && holds(op.Partition, from, op.Offset):
					r.CommittedSkips = append(r.CommittedSkips, Anomaly{Kind: "committed-skip", Value: op.Value, Process: op.Process,
						Partition: op.Partition, Offset: op.Offset, Detail: "first poll after assign, " + why + "; " +
							unpolled(op.Partition, from, op.Offset)})
				case past && holds(op.Partition, commits.definite[op.Partition], op.Offset):
					r.ResumedIndeterminate++
				}
				c.started, c.last = true, op.Offset
				continue
			}
			switch {
			case op.Offset <= c.last:
				r.NonmonotonicPolls = append(r.NonmonotonicPolls, Anomaly{Kind: "nonmonotonic-poll", Value: op.Value, Process: op.Process,
					Partition: op.Partition, Offset: op.Offset, Detail: fmt.Sprintf("after offset %d", c.last)})
			case op.Offset > c.last+1 && holds(op.Partition, c.last+1, op.Offset):
				r.PollSkips = append(r.PollSkips, Anomaly{Kind: "poll-skip", Value: op.Value, Process: op.Process,
					Partition: op.Partition, Offset: op.Offset, Detail: fmt.Sprintf("after offset %d", c.last)})
			}
			c.last = op.Offset
		}
	}
	for _, op := range ops {
		if op.F == history.Drained && op.Type == history.OK {
			r.Drained = true
		}
	}
	values := make([]string, 0, len(sends))
	for v := range sends {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		if s := sends[v]; s.outcome == history.OK && !polledValues[v] {
			r.Unseen++
			if r.Drained {
				r.Undelivered = append(r.Undelivered, Anomaly{Kind: "undelivered", Value: v, Process: s.proc, Partition: s.ack.p,
					Offset: s.ack.o, Detail: "acknowledged, never polled by the group although it caught up to the end"})
			}
		}
	}
}
