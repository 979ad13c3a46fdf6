package txn

import "github.com/twmb/franz-go/pkg/kerr"
import "samsa/kafka"

// The decisions below are pure: a metadata snapshot and a request in, a
// transition or a Kafka error code out (STYLE S6.7). The Coordinator
// applies them under its lock and writes the transition.

// initDecision is what InitProducerId does to an existing id.
type initDecision struct {
	code   int16   // non-zero: answer with it, nothing written
	fence  bool    // Ongoing: fence (epoch+1) and abort; answer CONCURRENT_TRANSACTIONS
	rotate bool    // write t with a fresh producer id (epoch 0)
	t      transit // the Empty transition to write
}

// decideInit is Kafka 2.8's TransactionCoordinator.handleInitProducerId
// for a known id in a non-pending state, with KIP-360's expected producer
// id and epoch (expPID -1: none supplied).
func decideInit(md transit, pending bool, timeoutMs int32, expPID int64, expEpoch int16, nowMs int64) initDecision {
	if pending {
		return initDecision{code: kerr.ConcurrentTransactions.Code}
	}
	hasExp := expPID != noProducerID
	if hasExp && !(md.epoch == noProducerEpoch || expPID == md.pid ||
		(expPID == md.lastPID && epochExhausted(expEpoch))) {
		return initDecision{code: kerr.ProducerFenced.Code}
	}
	switch md.state {
	case PrepareCommit, PrepareAbort:
		return initDecision{code: kerr.ConcurrentTransactions.Code}
	case Ongoing:
		return initDecision{fence: true, t: decideFence(md, nowMs)}
	case Empty, CompleteCommit, CompleteAbort:
	default: // Dead, PrepareEpochFence: only ever pending states
		return initDecision{code: kerr.ConcurrentTransactions.Code}
	}
	t := md
	t.state, t.partitions, t.startMs, t.updateMs, t.timeoutMs = Empty, nil, -1, nowMs, timeoutMs
	if epochExhausted(md.epoch) && (!hasExp || expEpoch == md.epoch) {
		// prepareProducerIdRotation: the caller fills the new pid.
		t.lastPID, t.epoch, t.lastEpoch = md.pid, 0, noProducerEpoch
		if hasExp {
			t.lastEpoch = md.epoch
		}
		return initDecision{rotate: true, t: t}
	}
	bumped := md.epoch + 1
	switch {
	case !hasExp:
		t.epoch, t.lastEpoch = bumped, noProducerEpoch
	case md.epoch == noProducerEpoch || expEpoch == md.epoch:
		t.epoch, t.lastEpoch = bumped, md.epoch
	case expEpoch == md.lastEpoch:
		// A retry of a bump whose answer was lost: same epoch again.
		t.epoch, t.lastEpoch = md.epoch, md.lastEpoch
	default:
		return initDecision{code: kerr.ProducerFenced.Code}
	}
	return initDecision{t: t}
}

// decideFence is the PrepareAbort an open transaction is fenced into
// (Kafka's prepareFenceProducerEpoch followed by the internal abort): the
// epoch goes up by one so the markers fence the old producer everywhere.
// PrepareEpochFence itself is never logged.
func decideFence(md transit, nowMs int64) transit {
	t := md
	if t.epoch < 1<<15-1 {
		t.epoch++
	}
	t.lastEpoch = noProducerEpoch
	t.state, t.updateMs = PrepareAbort, nowMs
	return t
}

// decideAdd is Kafka 2.8's handleAddPartitionsToTransaction checks and
// prepareAddPartitions: write is false when nothing needs writing.
func decideAdd(md transit, pending bool, pid int64, epoch int16, tps []kafka.TopicPartition, nowMs int64) (t transit, write bool, code int16) {
	switch {
	case md.pid != pid:
		return md, false, kerr.InvalidProducerIDMapping.Code
	case md.epoch != epoch:
		return md, false, kerr.ProducerFenced.Code
	case pending, md.state == PrepareCommit, md.state == PrepareAbort:
		return md, false, kerr.ConcurrentTransactions.Code
	}
	have := make(map[kafka.TopicPartition]struct{}, len(md.partitions))
	for _, tp := range md.partitions {
		have[tp] = struct{}{}
	}
	missing := false
	for _, tp := range tps {
		if _, ok := have[tp]; !ok {
			missing = true
		}
	}
	if md.state == Ongoing && !missing {
		return md, false, 0
	}
	t = md
	if md.state != Ongoing {
		t.startMs = nowMs
		have = map[kafka.TopicPartition]struct{}{}
		t.partitions = nil
	}
	for _, tp := range tps {
		if _, ok := have[tp]; !ok {
			have[tp] = struct{}{}
			t.partitions = append(t.partitions, tp)
		}
	}
	t.state, t.updateMs = Ongoing, nowMs
	return t, true, 0
}

// decideEnd is Kafka 2.8's handleEndTransaction for a client's EndTxn
// (the table in the reference, A2.5): write is false for answers that
// change nothing.
func decideEnd(md transit, pending bool, pid int64, epoch int16, commit bool, nowMs int64) (t transit, write bool, code int16) {
	switch {
	case md.pid != pid:
		return md, false, kerr.InvalidProducerIDMapping.Code
	case md.epoch != epoch:
		return md, false, kerr.ProducerFenced.Code
	case pending:
		return md, false, kerr.ConcurrentTransactions.Code
	}
	same := func(st State) bool { return st == PrepareCommit && commit || st == PrepareAbort && !commit }
	switch md.state {
	case Ongoing:
		t = md
		t.state, t.updateMs = PrepareAbort, nowMs
		if commit {
			t.state = PrepareCommit
		}
		return t, true, 0
	case PrepareCommit, PrepareAbort:
		if same(md.state) {
			return md, false, kerr.ConcurrentTransactions.Code
		}
		return md, false, kerr.InvalidTxnState.Code
	case CompleteCommit:
		if commit {
			return md, false, 0
		}
	case CompleteAbort:
		if !commit {
			return md, false, 0
		}
	}
	return md, false, kerr.InvalidTxnState.Code
}

// decideComplete is the Complete* transition after every marker landed.
func decideComplete(md transit, nowMs int64) transit {
	t := md
	t.state, t.partitions, t.updateMs = CompleteAbort, []kafka.TopicPartition{}, nowMs
	if md.state == PrepareCommit {
		t.state = CompleteCommit
	}
	return t
}

// decideVerify is the KIP-890 part 1 check (Kafka 3.6's
// handleVerifyPartitionsInTransaction): a code for the whole transaction,
// or one per partition (NONE if in the transaction, else INVALID_TXN_STATE).
func decideVerify(md transit, pid int64, epoch int16, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int16, int16) {
	switch {
	case md.pid != pid:
		return nil, kerr.InvalidProducerIDMapping.Code
	case md.epoch != epoch:
		return nil, kerr.ProducerFenced.Code
	case md.state == PrepareCommit, md.state == PrepareAbort:
		return nil, kerr.ConcurrentTransactions.Code
	}
	have := make(map[kafka.TopicPartition]struct{}, len(md.partitions))
	for _, tp := range md.partitions {
		have[tp] = struct{}{}
	}
	out := make(map[kafka.TopicPartition]int16, len(tps))
	for _, tp := range tps {
		out[tp] = kerr.InvalidTxnState.Code
		if _, ok := have[tp]; ok && md.state == Ongoing {
			out[tp] = 0
		}
	}
	return out, 0
}
