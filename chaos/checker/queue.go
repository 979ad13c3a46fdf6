package checker

import (
	"fmt"
	"sort"

	"samsa/chaos/history"
)

// Anomaly is one violation, with enough context to find it in the history.
type Anomaly struct {
	Kind      string // lost, duplicate, order, inconsistent-offset, phantom, aborted-read, poll-skip, nonmonotonic-poll, committed-skip, undelivered
	Value     string
	Process   string
	Partition int32
	Offset    int64
	Detail    string
}

func (a Anomaly) String() string {
	return fmt.Sprintf("%s value=%q proc=%s p=%d o=%d %s", a.Kind, a.Value, a.Process, a.Partition, a.Offset, a.Detail)
}

// Result is the outcome of Check.
type Result struct {
	Sends, Acked, Failed, Indeterminate int
	Polled                              int // poll ops
	FinalRecords                        int
	FinalComplete                       bool // every partition's final-end was recorded

	Lost                 []Anomaly
	DuplicatesIdempotent []Anomaly // a value of an idempotent producer at >1 offset
	DuplicatesOther      []Anomaly // the same for non-idempotent producers (allowed)
	Order                []Anomaly // idempotent producers only
	OrderOther           []Anomaly // non-idempotent producers (informational)
	InconsistentOffsets  []Anomaly
	Phantoms             []Anomaly
	AbortedReads         []Anomaly
	PollSkips            []Anomaly
	NonmonotonicPolls    []Anomaly
	CommittedSkips       []Anomaly
	Unseen               int // acked values the group never polled (informational unless Drained)
	// Drained: the group had polled up to every partition's end after the
	// producers stopped; then an unseen value is Undelivered.
	Drained     bool
	Undelivered []Anomaly
	// ResumedIndeterminate counts first polls after an assign that started
	// at a commit in flight or completed info, past the last ok one
	// (informational: the commit was applied after all).
	ResumedIndeterminate int

	Faults []FaultWindow
}

// Duplicates is the number of duplicated values of idempotent producers.
func (r Result) Duplicates() int { return len(r.DuplicatesIdempotent) }

// Failures lists the invariants broken, empty when the history is valid.
// Duplicates of non-idempotent producers and their reordering are allowed.
func (r Result) Failures() []string {
	var f []string
	add := func(name string, n int) {
		if n > 0 {
			f = append(f, fmt.Sprintf("%s=%d", name, n))
		}
	}
	add("lost", len(r.Lost))
	add("duplicates", len(r.DuplicatesIdempotent))
	add("order", len(r.Order))
	add("inconsistent-offsets", len(r.InconsistentOffsets))
	add("phantoms", len(r.Phantoms))
	add("aborted-reads", len(r.AbortedReads))
	add("poll-skips", len(r.PollSkips))
	add("nonmonotonic-polls", len(r.NonmonotonicPolls))
	add("committed-skips", len(r.CommittedSkips))
	add("undelivered", len(r.Undelivered))
	if !r.FinalComplete {
		f = append(f, "final-read-incomplete")
	}
	return f
}

type pos struct {
	p int32
	o int64
}

type sendInfo struct {
	proc       string
	seq        int64
	idempotent bool
	outcome    string // "" while only invoked
	ack        pos
}

// Check runs every queue invariant over ops, which must be in the order
// they were recorded (Writer order).
func Check(ops []history.Op) Result {
	var r Result
	partitions := map[int32]bool{} // partitions seen anywhere
	sends := collectSends(ops, &r, partitions)
	f := readFinal(ops, &r, partitions)
	checkSends(sends, f, &r)
	keys := f.sortedKeys()
	for _, k := range keys {
		if _, ok := sends[f.at[k]]; !ok {
			r.Phantoms = append(r.Phantoms, Anomaly{Kind: "phantom", Value: f.at[k], Partition: k.p, Offset: k.o,
				Detail: "in the final read, never sent"})
		}
	}
	r.Order, r.OrderOther = checkOrder(keys, f.at, sends)
	checkPolls(ops, &r, sends, f.at, keys)
	r.Faults = unavailability(ops)
	return r
}

// collectSends folds every send's invoke and completion into one sendInfo
// per value and counts the outcomes.
func collectSends(ops []history.Op, r *Result, partitions map[int32]bool) map[string]*sendInfo {
	sends := map[string]*sendInfo{}
	for _, op := range ops {
		if op.F != history.Send {
			continue
		}
		s := sends[op.Value]
		if s == nil {
			s = &sendInfo{proc: op.Process, seq: op.Seq, idempotent: op.Idempotent}
			sends[op.Value] = s
		}
		switch op.Type {
		case history.Invoke:
			r.Sends++
		case history.OK:
			s.outcome = history.OK
			s.ack = pos{op.Partition, op.Offset}
			partitions[op.Partition] = true
			r.Acked++
		case history.Fail:
			s.outcome = history.Fail
			r.Failed++
		case history.Info:
			s.outcome = history.Info
			r.Indeterminate++
		}
	}
	return sends
}

// finalLog is the final read: the ground truth of the log.
type finalLog struct {
	at     map[pos]string   // offset -> value
	values map[string][]pos // value -> offsets
}

func (f finalLog) sortedKeys() []pos {
	keys := make([]pos, 0, len(f.at))
	for k := range f.at {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].p != keys[j].p {
			return keys[i].p < keys[j].p
		}
		return keys[i].o < keys[j].o
	})
	return keys
}

// readFinal gathers the final read, flags an offset read with two values,
// and sets FinalComplete: every partition seen anywhere reached its end.
func readFinal(ops []history.Op, r *Result, partitions map[int32]bool) finalLog {
	f := finalLog{at: map[pos]string{}, values: map[string][]pos{}}
	ends := map[int32]int64{} // partition -> end offset
	for _, op := range ops {
		switch op.F {
		case history.FinalRead:
			k := pos{op.Partition, op.Offset}
			if v, dup := f.at[k]; dup {
				if v != op.Value {
					r.InconsistentOffsets = append(r.InconsistentOffsets, Anomaly{Kind: "inconsistent-offset", Value: op.Value,
						Process: op.Process, Partition: op.Partition, Offset: op.Offset, Detail: "final read also holds " + v})
				}
				continue
			}
			f.at[k] = op.Value
			f.values[op.Value] = append(f.values[op.Value], k)
			partitions[op.Partition] = true
			r.FinalRecords++
		case history.FinalEnd:
			ends[op.Partition] = op.Offset
		}
	}
	r.FinalComplete = len(ends) > 0
	for p := range partitions {
		if _, ok := ends[p]; !ok {
			r.FinalComplete = false
		}
	}
	return f
}

// checkSends holds every send against the final read: lost, acknowledged
// offset consistency, aborted reads, duplicates.
func checkSends(sends map[string]*sendInfo, f finalLog, r *Result) {
	values := make([]string, 0, len(sends))
	for v := range sends {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		s := sends[v]
		at := f.values[v]
		if s.outcome == history.OK {
			if len(at) == 0 {
				r.Lost = append(r.Lost, Anomaly{Kind: "lost", Value: v, Process: s.proc, Partition: s.ack.p, Offset: s.ack.o,
					Detail: "acknowledged, absent from the final read"})
			} else if fv, ok := f.at[s.ack]; !ok || fv != v {
				r.InconsistentOffsets = append(r.InconsistentOffsets, Anomaly{Kind: "inconsistent-offset", Value: v, Process: s.proc,
					Partition: s.ack.p, Offset: s.ack.o, Detail: fmt.Sprintf("acknowledged here, final read has %q", fv)})
			}
		}
		if s.outcome == history.Fail && len(at) > 0 {
			r.AbortedReads = append(r.AbortedReads, Anomaly{Kind: "aborted-read", Value: v, Process: s.proc,
				Partition: at[0].p, Offset: at[0].o, Detail: "send failed definitely, value in the final read"})
		}
		if len(at) > 1 {
			a := Anomaly{Kind: "duplicate", Value: v, Process: s.proc, Partition: at[1].p, Offset: at[1].o,
				Detail: fmt.Sprintf("at %d offsets, first p=%d o=%d", len(at), at[0].p, at[0].o)}
			if s.idempotent {
				r.DuplicatesIdempotent = append(r.DuplicatesIdempotent, a)
			} else {
				r.DuplicatesOther = append(r.DuplicatesOther, a)
			}
		}
	}
}

// checkOrder walks each partition of the final read in offset order and
// flags a producer value whose Seq is not above the previous one of the
// same producer in that partition.
func checkOrder(keys []pos, final map[pos]string, sends map[string]*sendInfo) (idem, other []Anomaly) {
	type last struct {
		seq int64
		o   int64
	}
	prev := map[string]last{} // partition/producer
	for _, k := range keys {
		v := final[k]
		s, ok := sends[v]
		if !ok {
			continue
		}
		id := fmt.Sprintf("%d/%s", k.p, s.proc)
		if l, seen := prev[id]; seen && s.seq == l.seq {
			continue // the same value twice: a duplicate, counted as one
		} else if seen && s.seq < l.seq {
			a := Anomaly{Kind: "order", Value: v, Process: s.proc, Partition: k.p, Offset: k.o,
				Detail: fmt.Sprintf("seq %d after seq %d at offset %d", s.seq, l.seq, l.o)}
			if s.idempotent {
				idem = append(idem, a)
			} else {
				other = append(other, a)
			}
			continue
		}
		prev[id] = last{s.seq, k.o}
	}
	return idem, other
}
