package checker

import (
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
	var out []FaultWindow
	open := map[int64]int{} // cycle -> index in out
	for _, op := range ops {
		switch {
		case op.F == history.Fault && op.Type == history.Invoke:
			open[op.Seq] = len(out)
			out = append(out, FaultWindow{Fault: op.Value, Cycle: op.Seq, Start: op.At(), SendAfterHeal: -1})
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
