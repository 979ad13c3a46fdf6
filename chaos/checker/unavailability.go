package checker

import (
	"maps"
	"slices"
	"sort"
	"time"

	"samsa/chaos/history"
)

// FaultWindow is one fault's measured unavailability.
type FaultWindow struct {
	Fault     string
	Cycle     int64 // the fault op's Seq
	Start     time.Time
	Healed    time.Time // zero when the heal was never recorded
	Recovered time.Time // zero when recovery was never recorded
	// SendGap and PollGap are the longest stretches without a successful
	// send (poll) from Start to Recovered (to Healed, or to the last op,
	// when those are missing), the window's ends counting as events.
	SendGap, PollGap time.Duration
	// SendAfterHeal is the time from Healed to the first successful send
	// after it; -1 when none came.
	SendAfterHeal time.Duration
	// CommitGap is the longest time one transactional producer went
	// without a committed transaction (a txn op answered ok), from the
	// fault's start, or the producer's first txn op if later, until its
	// first commit after the window's end (Recovered, or as SendGap's) but
	// not past the next fault's start; a producer that never commits again
	// counts until its last txn op.
	// CommitProcess is that producer. CommitGap is -1 when no
	// transactional producer was active in the window (the transactional
	// workload did not run; the final fence transaction starts after
	// every fault).
	CommitGap     time.Duration
	CommitProcess string
}

// unavailability measures every fault recorded in ops.
func unavailability(ops []history.Op) []FaultWindow {
	var sendT, pollT []int64
	var last int64
	for _, op := range ops {
		if op.Time > last {
			last = op.Time
		}
		if op.Type != history.OK {
			continue
		}
		switch op.F {
		case history.Send:
			sendT = append(sendT, op.Time)
		case history.Poll:
			pollT = append(pollT, op.Time)
		}
	}
	sort.Slice(sendT, func(i, j int) bool { return sendT[i] < sendT[j] })
	sort.Slice(pollT, func(i, j int) bool { return pollT[i] < pollT[j] })
	commits := txnCommitters(ops)
	var out []FaultWindow
	open := map[int64]int{} // cycle -> index in out
	for _, op := range ops {
		switch {
		case op.F == history.Fault && op.Type == history.Invoke:
			open[op.Seq] = len(out)
			out = append(out, FaultWindow{Fault: op.Value, Cycle: op.Seq, Start: op.At(), SendAfterHeal: -1, CommitGap: -1})
		case op.F == history.Fault && op.Type != history.Invoke:
			if i, ok := open[op.Seq]; ok {
				out[i].Healed = op.At()
			}
		case op.F == history.Recovered:
			if i, ok := open[op.Seq]; ok {
				out[i].Recovered = op.At()
			}
		}
	}
	for i := range out {
		w := &out[i]
		end := last
		if !w.Recovered.IsZero() {
			end = w.Recovered.UnixNano()
		} else if !w.Healed.IsZero() {
			end = w.Healed.UnixNano()
		}
		w.SendGap = longestGap(sendT, w.Start.UnixNano(), end)
		w.PollGap = longestGap(pollT, w.Start.UnixNano(), end)
		limit := last // the next fault's start: its stall is its own
		if i+1 < len(out) {
			limit = out[i+1].Start.UnixNano()
		}
		w.CommitGap, w.CommitProcess = commits.longestGap(w.Start.UnixNano(), end, limit)
		if !w.Healed.IsZero() {
			h := w.Healed.UnixNano()
			j := sort.Search(len(sendT), func(j int) bool { return sendT[j] >= h })
			if j < len(sendT) {
				w.SendAfterHeal = time.Duration(sendT[j] - h)
			}
		}
	}
	return out
}

// committer is one transactional producer's commit times (sorted) and the
// span of its txn ops.
type committer struct {
	commits     []int64
	first, last int64
}

// committers are the transactional producers of a history by process.
type committers map[string]*committer

// txnCommitters collects every process's txn ops.
func txnCommitters(ops []history.Op) committers {
	cs := committers{}
	for _, op := range ops {
		if op.F != history.Txn {
			continue
		}
		c := cs[op.Process]
		if c == nil {
			c = &committer{first: op.Time, last: op.Time}
			cs[op.Process] = c
		}
		c.first, c.last = min(c.first, op.Time), max(c.last, op.Time)
		if op.Type == history.OK {
			c.commits = append(c.commits, op.Time)
		}
	}
	for _, c := range cs {
		sort.Slice(c.commits, func(i, j int) bool { return c.commits[i] < c.commits[j] })
	}
	return cs
}

// longestGap is FaultWindow.CommitGap over the window [from, to], never
// counted past limit (the next fault's start): the worst producer's gap
// and its name, -1 when none was active.
func (cs committers) longestGap(from, to, limit int64) (time.Duration, string) {
	gap, who := time.Duration(-1), ""
	for _, name := range slices.Sorted(maps.Keys(cs)) {
		c := cs[name]
		start := max(from, c.first)
		if start > to || c.last < from {
			continue
		}
		end := c.last // no commit after the window: until its last txn op
		if j := sort.Search(len(c.commits), func(j int) bool { return c.commits[j] > to }); j < len(c.commits) {
			end = c.commits[j]
		}
		end = min(end, max(limit, to))
		if g := longestGap(c.commits, start, end); g > gap {
			gap, who = g, name
		}
	}
	return gap, who
}

// longestGap is the longest interval between consecutive times of ts (sorted)
// inside [from, to], from and to included as events.
func longestGap(ts []int64, from, to int64) time.Duration {
	if to < from {
		return 0
	}
	prev := from
	var gap int64
	i := sort.Search(len(ts), func(i int) bool { return ts[i] >= from })
	for ; i < len(ts) && ts[i] <= to; i++ {
		if d := ts[i] - prev; d > gap {
			gap = d
		}
		prev = ts[i]
	}
	if d := to - prev; d > gap {
		gap = d
	}
	return time.Duration(gap)
}
