package txn

import (
	"context"
	"errors"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

// InitResult is InitProducerID's answer.
type InitResult struct {
	ProducerID    int64
	ProducerEpoch int16
	Code          int16
}

// InitProducerID is InitProducerId for transactional id id (non-empty;
// the broker answers the idempotent case itself). expPID/expEpoch are
// KIP-360's producer_id/producer_epoch (-1 when not sent). It blocks
// until the new state is replicated.
func (c *Coordinator) InitProducerID(ctx context.Context, id string, timeoutMs int32, expPID int64, expEpoch int16) InitResult {
	if id == "" {
		return initFail(kerr.InvalidRequest.Code)
	}
	if timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > c.cfg.MaxTimeout {
		return initFail(kerr.InvalidTransactionTimeout.Code)
	}
	w := pendingWait{d: c.cfg.PendingWait}
	defer w.stop()
	for {
		if res, again := c.initOnce(ctx, id, timeoutMs, expPID, expEpoch, &w); !again {
			return res
		}
	}
}

func initFail(code int16) InitResult {
	return InitResult{ProducerID: noProducerID, ProducerEpoch: noProducerEpoch, Code: code}
}

// initOnce is one decision of InitProducerID; again reports that it waited
// for an in-flight step that has now changed, so the caller decides again.
func (c *Coordinator) initOnce(ctx context.Context, id string, timeoutMs int32, expPID int64, expEpoch int16, w *pendingWait) (_ InitResult, again bool) {
	fail := func(code int16) (InitResult, bool) { return initFail(code), false }
	c.mu.Lock()
	p, part, code := c.ownerLocked(id)
	if code != 0 {
		c.mu.Unlock()
		return fail(code)
	}
	md := part.txns[id]
	c.mu.Unlock()
	if md == nil {
		// A new id: a fresh producer id at epoch -1 in Empty, in memory
		// until the bump below is written (Kafka's putTransactionStateIfNotExists).
		pid, err := c.newPID()
		if err != nil {
			c.lg.WithError(err).Warn("txn: cannot allocate a producer id")
			return fail(kerr.CoordinatorLoadInProgress.Code)
		}
		c.mu.Lock()
		if p2, part2, code := c.ownerLocked(id); code != 0 || p2 != p || part2 != part {
			c.mu.Unlock()
			return fail(kerr.NotCoordinator.Code)
		}
		if md = part.txns[id]; md == nil {
			md = &metadata{id: id, pid: pid, lastPID: noProducerID, epoch: noProducerEpoch, lastEpoch: noProducerEpoch,
				timeoutMs: timeoutMs, state: Empty, partitions: map[kafka.TopicPartition]struct{}{},
				startMs: -1, updateMs: c.now().UnixMilli(), pending: noState, unreplicated: noState}
			part.txns[id] = md
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	d := decideInit(md.snapshot(), md.pending != noState, timeoutMs, expPID, expEpoch, c.now().UnixMilli())
	if d.code == kerr.ConcurrentTransactions.Code && c.awaitChangeLocked(ctx, part, md, w) {
		return InitResult{}, true
	} else if d.code == kerr.ConcurrentTransactions.Code {
		return fail(d.code)
	}
	if d.code != 0 {
		c.mu.Unlock()
		return fail(d.code)
	}
	if d.fence {
		md.pending = PrepareEpochFence
		c.mu.Unlock()
		c.metrics.fences.Inc(1)
		if code := c.write(ctx, p, part, md, d.t); code == 0 {
			c.mu.Lock()
			c.startMarkersLocked(p, part, md)
			c.mu.Unlock()
		}
		// The client retries and then gets the bump (a second one).
		return fail(kerr.ConcurrentTransactions.Code)
	}
	md.pending = Empty
	c.mu.Unlock()
	if d.rotate {
		pid, err := c.newPID()
		if err != nil {
			c.clearPending(part, md)
			return fail(kerr.CoordinatorLoadInProgress.Code)
		}
		d.t.pid = pid
	}
	if code := c.write(ctx, p, part, md, d.t); code != 0 {
		return fail(code)
	}
	return InitResult{ProducerID: d.t.pid, ProducerEpoch: d.t.epoch}, false
}

// clearPending drops md's pending transition (its write was not attempted).
func (c *Coordinator) clearPending(part *partition, md *metadata) {
	c.mu.Lock()
	md.pending = noState
	md.notifyLocked()
	c.mu.Unlock()
}

// write appends t for md, whose pending state the caller set, and applies
// it if the partition is still led at the same coordinator epoch (else
// NOT_COORDINATOR). The pending state is cleared either way. Every
// transition is applied once replicated, except Complete*, applied once
// appended (the next transaction may start; its own record's replication
// implies this one's, doc.go) and shown to readers once replicated
// (settleComplete).
func (c *Coordinator) write(ctx context.Context, p int32, part *partition, md *metadata, t transit) int16 {
	nowMs := c.now().UnixMilli()
	batch, err := buildRecord(EncodeKey(md.id), EncodeValue(t.value()), nowMs)
	if err != nil {
		c.mu.Lock()
		md.endWriteLocked(t)
		md.notifyLocked()
		c.mu.Unlock()
		c.lg.WithError(err).Error("txn: cannot encode a transaction state record")
		return kerr.UnknownServerError.Code
	}
	next, err := c.log.Append(p, batch)
	if err == nil && t.chain != 0 {
		c.mu.Lock()
		md.appendedLocked(t)
		c.mu.Unlock()
	}
	early := t.state == CompleteCommit || t.state == CompleteAbort
	if err == nil && !early {
		err = c.log.WaitReplicated(ctx, p, next, time.Duration(t.timeoutMs)*time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	md.endWriteLocked(t)
	defer md.notifyLocked()
	if c.mu.parts[p] != part || part.txns[md.id] != md {
		return kerr.NotCoordinator.Code
	}
	if code := appendCode(err); code != 0 {
		c.lg.WithError(err).WithFields(logrus.Fields{"transactional_id": md.id, "state": t.state}).
			Info("txn: transaction state append failed")
		return code
	}
	if next <= md.chain.appliedNext {
		return 0 // a chained record after this one, holding its partitions, is applied already
	}
	from := md.state
	md.apply(t)
	md.chain.appliedNext = next
	md.unreplicated, md.unreplicatedNext = noState, 0 // a replicated record: every earlier one is too
	if early {
		md.unreplicated, md.unreplicatedNext = from, next
	}
	if t.state != Ongoing {
		md.queuedAdds = nil // asked for in a transaction that is over
	}
	c.metrics.transition(from, t.state)
	return 0
}

// settleWait bounds one replication wait of settleComplete (it waits
// again after a timeout, for as long as the partition is led here).
const settleWait = 30 * time.Second

// settleComplete waits until md's Complete* record, applied before its
// replication, is below the high watermark and then shows it to
// DescribeTransactions and ListTransactions (until then they report the
// Prepare* state it replaced, the one a coordinator elected meanwhile
// would load). It returns when the partition's tenure ends, or when a
// later record of the id replicated (which settles it too).
func (c *Coordinator) settleComplete(p int32, part *partition, md *metadata) {
	for {
		c.mu.Lock()
		next := md.unreplicatedNext
		if md.unreplicated == noState || c.mu.parts[p] != part {
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		err := c.log.WaitReplicated(part.ctx, p, next, settleWait)
		switch {
		case err == nil, errors.Is(err, ErrNotEnoughReplicas):
			// ErrNotEnoughReplicas: the high watermark passed it, with the
			// ISR below min.insync.replicas: replicated to the whole ISR.
			c.mu.Lock()
			if md.unreplicatedNext == next {
				md.unreplicated, md.unreplicatedNext = noState, 0
			}
			c.mu.Unlock()
			return
		case errors.Is(err, ErrTimeout):
			continue // a slow follower: the record stays in the log, wait again
		}
		return // not the leader any more, or resigned: the next coordinator reloads
	}
}

// readerState is md's state as DescribeTransactions and
// ListTransactions report it: the replicated one.
func (md *metadata) readerState() State {
	if md.unreplicated != noState {
		return md.unreplicated
	}
	return md.state
}

// lockTxn takes c.mu and finds id's partition and metadata. On success it
// returns with c.mu held (the caller decides, then unlocks); on an error code
// c.mu is already released: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS
// from ownerLocked, INVALID_PRODUCER_ID_MAPPING for an id never initialised.
func (c *Coordinator) lockTxn(id string) (int32, *partition, *metadata, int16) {
	c.mu.Lock()
	p, part, code := c.ownerLocked(id)
	if code != 0 {
		c.mu.Unlock()
		return 0, nil, nil, code
	}
	md := part.txns[id]
	if md == nil {
		c.mu.Unlock()
		return 0, nil, nil, kerr.InvalidProducerIDMapping.Code
	}
	return p, part, md, 0
}

// AddPartitions is AddPartitionsToTxn (and AddOffsetsToTxn, with the
// group's __consumer_offsets partition): one code for all partitions.
func (c *Coordinator) AddPartitions(ctx context.Context, id string, pid int64, epoch int16, tps []kafka.TopicPartition) int16 {
	if id == "" {
		return kerr.InvalidRequest.Code
	}
	w := pendingWait{d: c.cfg.PendingWait}
	defer w.stop()
	for {
		p, part, md, code := c.lockTxn(id)
		if code != 0 {
			return code
		}
		base, pending := md.chainBaseLocked()
		t, write, code := decideAdd(base, pending, pid, epoch, md.withQueuedAdds(pid, epoch, tps), c.now().UnixMilli())
		if code == 0 && !write && md.pending != noState {
			// Every partition is in a chained record not yet replicated:
			// answer once it is (or decide again if it failed).
			code = kerr.ConcurrentTransactions.Code
		}
		if code == kerr.ConcurrentTransactions.Code {
			if md.pending == Ongoing && w.d > 0 {
				md.queueAdds(pid, epoch, tps)
			}
			if c.awaitChangeLocked(ctx, part, md, &w) {
				continue
			}
			return code
		}
		if code != 0 || !write {
			c.mu.Unlock()
			return code
		}
		md.takeQueuedAdds(pid, epoch)
		md.startAddLocked(&t)
		c.mu.Unlock()
		return c.write(ctx, p, part, md, t)
	}
}

// EndTxn is a client's EndTxn: it answers once PrepareCommit/PrepareAbort
// is replicated; the markers and the Complete* record follow in the
// background.
func (c *Coordinator) EndTxn(ctx context.Context, id string, pid int64, epoch int16, commit bool) int16 {
	if id == "" {
		return kerr.InvalidRequest.Code
	}
	w := pendingWait{d: c.cfg.PendingWait}
	defer w.stop()
	for {
		p, part, md, code := c.lockTxn(id)
		if code != 0 {
			return code
		}
		t, write, code := decideEnd(md.snapshot(), md.pending != noState, pid, epoch, commit, c.now().UnixMilli())
		if code == kerr.ConcurrentTransactions.Code {
			// A pending append, or a retried EndTxn of a transaction
			// whose markers are still being written: wait for the step.
			if c.awaitChangeLocked(ctx, part, md, &w) {
				continue
			}
			return code
		}
		if code != 0 || !write {
			c.mu.Unlock()
			return code
		}
		md.pending = t.state
		c.mu.Unlock()
		if code := c.write(ctx, p, part, md, t); code != 0 {
			return code
		}
		c.mu.Lock()
		c.startMarkersLocked(p, part, md)
		c.mu.Unlock()
		return 0
	}
}

// Verify is KIP-890 part 1's AddPartitionsToTxn v4 verify_only check: a
// code for the whole transaction, or one per partition. Nothing is written.
func (c *Coordinator) Verify(id string, pid int64, epoch int16, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int16, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, part, code := c.ownerLocked(id)
	if code != 0 {
		return nil, code
	}
	md := part.txns[id]
	if md == nil {
		return nil, kerr.InvalidProducerIDMapping.Code
	}
	return decideVerify(md.snapshot(), pid, epoch, tps)
}

// Description is DescribeTransactions' answer for one id.
type Description struct {
	Code          int16
	State         State
	TimeoutMs     int32
	StartMs       int64
	ProducerID    int64
	ProducerEpoch int16
	Partitions    []kafka.TopicPartition // while preparing: those still without their marker
}

// Describe is DescribeTransactions for one id: TRANSACTIONAL_ID_NOT_FOUND
// for an unknown or Dead id.
func (c *Coordinator) Describe(id string) Description {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, part, code := c.ownerLocked(id)
	if code != 0 {
		return Description{Code: code}
	}
	md := part.txns[id]
	if md == nil || md.state == Dead {
		return Description{Code: kerr.TransactionalIDNotFound.Code}
	}
	return Description{State: md.readerState(), TimeoutMs: md.timeoutMs, StartMs: md.startMs, ProducerID: md.pid,
		ProducerEpoch: md.epoch, Partitions: md.partitionList()}
}

// Listing is one row of ListTransactions.
type Listing struct {
	ID         string
	ProducerID int64
	State      State
}

// List is ListTransactions over the partitions this broker leads: ids
// whose state is in states and producer id in pids (empty filters match
// all). While any partition loads the answer is COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) List(states []State, pids []int64) ([]Listing, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stateOK := func(s State) bool {
		for _, f := range states {
			if f == s {
				return true
			}
		}
		return len(states) == 0
	}
	pidOK := func(p int64) bool {
		for _, f := range pids {
			if f == p {
				return true
			}
		}
		return len(pids) == 0
	}
	var out []Listing
	for _, part := range c.mu.parts {
		if part.loading {
			return nil, kerr.CoordinatorLoadInProgress.Code
		}
		for id, md := range part.txns {
			if st := md.readerState(); st != Dead && stateOK(st) && pidOK(md.pid) {
				out = append(out, Listing{ID: id, ProducerID: md.pid, State: st})
			}
		}
	}
	return out, 0
}
