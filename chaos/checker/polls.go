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
	type cursor struct {
		last    int64
		started bool
	}
	committed := map[int32]int64{}
	cursors := map[string]*cursor{} // proc/partition, reset by assign
	polledValues := map[string]bool{}
	for _, op := range ops {
		id := fmt.Sprintf("%s/%d", op.Process, op.Partition)
		switch op.F {
		case history.Commit:
			if op.Type == history.OK && op.Offset > committed[op.Partition] {
				committed[op.Partition] = op.Offset
			}
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
				from := committed[op.Partition]
				if op.Offset > from && holds(op.Partition, from, op.Offset) {
					r.CommittedSkips = append(r.CommittedSkips, Anomaly{Kind: "committed-skip", Value: op.Value, Process: op.Process,
						Partition: op.Partition, Offset: op.Offset, Detail: fmt.Sprintf("first poll after assign, committed offset %d", from)})
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
	for v, s := range sends {
		if s.outcome == history.OK && !polledValues[v] {
			r.Unseen++
		}
	}
}
