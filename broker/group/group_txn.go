package group

// Transactional offset commits (KIP-98 TxnOffsetCommit, KIP-447): offsets
// a transaction commits are written to __consumer_offsets as a
// transactional batch of the producer and held *pending* per producer id
// until the transaction's marker lands on the offsets partition
// (CompleteTxnOffsets): COMMIT makes them the group's committed offsets,
// ABORT drops them. Loading replays the same rule from the log.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/broker/record"
	"samsa/kafka"
)

// TxnCommitRequest is TxnOffsetCommit for one group.
type TxnCommitRequest struct {
	Group           string
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Generation      int32  // -1 (v0-2 default) skips the generation check
	MemberID        string // "" (v0-2 default) skips the member check
	GroupInstanceID string
	Offsets         []CommitOffset
}

// txnPending is a group's offsets pending per producer id; owned by the
// group goroutine.
type txnPending map[int64]map[kafka.TopicPartition]OffsetValue

// CommitTxnOffsets is Kafka 2.8's GroupCoordinator.handleTxnCommitOffsets:
// one code per req.Offsets entry, after the batch is in the log. A missing
// group is created Empty.
func (c *Coordinator) CommitTxnOffsets(ctx context.Context, req TxnCommitRequest) []int16 {
	n := len(req.Offsets)
	if !validGroupID(req.Group, true) {
		return fillCodes(n, kerr.InvalidGroupID.Code)
	}
	g, code := c.lookup(req.Group, true)
	if code != 0 {
		return fillCodes(n, code)
	}
	if g == nil {
		return fillCodes(n, kerr.CoordinatorNotAvailable.Code)
	}
	return call(ctx, g, func(code int16) []int16 { return fillCodes(n, code) },
		func(reply chan<- []int16) { g.handleTxnCommit(req, reply) })
}

// handleTxnCommit is Kafka's doTxnCommitOffsets on the group goroutine.
func (g *group) handleTxnCommit(req TxnCommitRequest, reply chan<- []int16) {
	n := len(req.Offsets)
	switch {
	case g.is(Dead):
		reply <- fillCodes(n, kerr.CoordinatorNotAvailable.Code)
	case g.isStaticMemberFenced(req.MemberID, req.GroupInstanceID):
		reply <- fillCodes(n, kerr.FencedInstanceID.Code)
	case req.MemberID != "" && g.members[req.MemberID] == nil:
		reply <- fillCodes(n, kerr.UnknownMemberID.Code)
	case req.Generation >= 0 && req.Generation != g.generation:
		reply <- fillCodes(n, kerr.IllegalGeneration.Code)
	default:
		g.storeTxnOffsets(req, reply)
	}
}

// storeTxnOffsets writes the offsets as one transactional batch of the
// producer and records them pending once appended.
func (g *group) storeTxnOffsets(req TxnCommitRequest, reply chan<- []int16) {
	now := g.c.clock.Now().UnixMilli()
	codes := make([]int16, len(req.Offsets))
	var recs []record.Record
	var idx []int
	var vals []OffsetValue
	for i, o := range req.Offsets {
		if len(o.Metadata) > g.c.cfg.OffsetMetadataMaxBytes || len(o.Metadata) > maxStringLen || len(o.Topic) > maxStringLen {
			codes[i] = kerr.OffsetMetadataTooLarge.Code
			continue
		}
		v := OffsetValue{Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, CommitTimestamp: now, ExpireTimestamp: -1}
		recs = append(recs, record.Record{OffsetDelta: int32(len(recs)), Key: EncodeOffsetKey(g.id, o.Topic, o.Partition), Value: EncodeOffsetValue(v)})
		idx = append(idx, i)
		vals = append(vals, v)
	}
	if len(recs) == 0 {
		reply <- codes
		return
	}
	h := record.NewBuildHeader(0, now)
	h.Transactional, h.ProducerID, h.ProducerEpoch = true, req.ProducerID, req.ProducerEpoch
	codec := record.Codec(g.c.cfg.CompressionCodec)
	if _, err := record.Build(h, recs, codec); err != nil {
		for _, i := range idx {
			codes[i] = kerr.InvalidCommitOffsetSize.Code
		}
		reply <- codes
		return
	}
	g.enqueueAppend(&appendOp{
		write: func(ctx context.Context) error {
			return g.c.txnSeqs.write(ctx, g.c.olog, g.partition, h, recs, codec)
		},
		done: func(err error) {
			code := appendErrorCode(err, true)
			for j, i := range idx {
				codes[i] = code
				if code == 0 && !g.is(Dead) {
					g.addTxnPending(req.ProducerID, req.Offsets[i].TopicPartition, vals[j])
				}
			}
			reply <- codes
		},
		abort: func(code int16) {
			for _, i := range idx {
				codes[i] = code
			}
			reply <- codes
		},
	})
}

// addTxnPending records one pending offset of producer pid.
func (g *group) addTxnPending(pid int64, tp kafka.TopicPartition, v OffsetValue) {
	if g.txnOffsets == nil {
		g.txnOffsets = txnPending{}
	}
	m := g.txnOffsets[pid]
	if m == nil {
		m = map[kafka.TopicPartition]OffsetValue{}
		g.txnOffsets[pid] = m
	}
	m[tp] = v
}

// completeTxn applies producer pid's marker to the group: its pending
// offsets become committed (COMMIT) or are dropped (ABORT). Kafka's
// GroupMetadata.completePendingTxnOffsetCommit.
func (g *group) completeTxn(pid int64, commit bool) {
	m := g.txnOffsets[pid]
	if m == nil {
		return
	}
	delete(g.txnOffsets, pid)
	if commit && !g.is(Dead) {
		for tp, v := range m {
			g.offsets[tp] = offsetEntry{v}
		}
		g.publishCounts()
	}
}

// hasTxnPending reports whether any producer has a pending offset for tp.
func (g *group) hasTxnPending(tp kafka.TopicPartition) bool {
	for _, m := range g.txnOffsets {
		if _, ok := m[tp]; ok {
			return true
		}
	}
	return false
}

// CompleteTxnOffsets is what the WriteTxnMarkers handler calls after
// producerID's COMMIT (commit true) or ABORT marker is replicated on the
// __consumer_offsets partitions offsetsPartitions: every group of those
// partitions with offsets pending for the producer materialises (COMMIT)
// or drops (ABORT) them, as Kafka's
// GroupCoordinator.scheduleHandleTxnCompletion(producerId,
// offsetsPartitions, isCommit). It does not block: each group applies it
// on its own goroutine, after the requests already queued there.
func (c *Coordinator) CompleteTxnOffsets(producerID int64, offsetsPartitions []int32, commit bool) {
	c.mu.Lock()
	var groups []*group
	for _, p := range offsetsPartitions {
		if ps := c.mu.partitions[p]; ps != nil {
			for _, g := range ps.groups {
				groups = append(groups, g)
			}
		}
	}
	c.mu.Unlock()
	for _, g := range groups {
		g := g
		c.goTracked(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			call(ctx, g, func(int16) struct{} { return struct{}{} }, func(reply chan<- struct{}) {
				g.completeTxn(producerID, commit)
				reply <- struct{}{}
			})
		})
	}
}

// FetchOffsetsStable is OffsetFetch with require_stable (KIP-447, v7): as
// FetchOffsets, but a partition with a transactional commit pending gets
// offset -1 and UNSTABLE_OFFSET_COMMIT in codes (clients retry). parts nil
// means every committed partition; codes is parallel to the offsets.
func (c *Coordinator) FetchOffsetsStable(ctx context.Context, groupID string, parts []kafka.TopicPartition) (int16, []FetchedOffset, []int16) {
	code, offs := c.FetchOffsets(ctx, groupID, parts)
	if code != 0 || len(offs) == 0 {
		return code, offs, make([]int16, len(offs))
	}
	g, lcode := c.lookup(groupID, false)
	if lcode != 0 || g == nil {
		return code, offs, make([]int16, len(offs))
	}
	codes := call(ctx, g, func(code int16) []int16 { return fillCodes(len(offs), 0) }, func(reply chan<- []int16) {
		out := make([]int16, len(offs))
		for i := range offs {
			if g.hasTxnPending(offs[i].TopicPartition) {
				out[i] = kerr.UnstableOffsetCommit.Code
			}
		}
		reply <- out
	})
	for i, cd := range codes {
		if cd != 0 {
			offs[i] = noOffset(offs[i].TopicPartition)
		}
	}
	return code, offs, codes
}

// txnSequences tracks, per offsets partition and producer, the epoch and
// last sequence of the transactional offset batches in the log. The log's
// producer-state checks (broker/storage) apply to the coordinator's own
// appends too: a batch out of sequence is refused, and one repeating the
// sequences of one of the producer's last batches is taken for a retry and
// not written (a lost commit). So each batch takes the next sequence when
// it is written (write), one write per partition and producer at a time,
// whatever group and append queue it comes from (Kafka writes sequence 0
// and skips the check for coordinator appends; the bytes differ only in
// base_sequence). Rebuilt by loading.
type txnSequences struct {
	mu sync.Mutex
	m  map[int32]map[int64]txnSeq // guarded by mu
	// busy holds, per partition and producer with a write in flight, a
	// channel closed when it ends; guarded by mu.
	busy map[txnSeqKey]chan struct{}
}

type txnSeqKey struct {
	p   int32
	pid int64
}

// write appends the transactional offset batch of recs (header h, its
// sequence filled here) to partition p after every earlier write of the
// producer there, with the next sequence, and advances the sequence once
// the batch is in the log (also when only its replication failed:
// ErrAppended).
func (s *txnSequences) write(ctx context.Context, olog OffsetLog, p int32, h record.BuildHeader, recs []record.Record, codec record.Codec) error {
	release, err := s.claim(ctx, txnSeqKey{p, h.ProducerID})
	if err != nil {
		return err
	}
	defer release()
	h.BaseSequence = s.next(p, h.ProducerID, h.ProducerEpoch)
	batch, err := record.Build(h, recs, codec)
	if err != nil {
		return err
	}
	_, err = olog.Append(ctx, p, []byte(batch))
	if err == nil || errors.Is(err, ErrAppended) {
		s.appended(p, h.ProducerID, h.ProducerEpoch, h.BaseSequence+int32(len(recs))-1)
	}
	return err
}

// claim waits until no write of k is in flight (or ctx ends) and makes
// the caller's the one; release ends it.
func (s *txnSequences) claim(ctx context.Context, k txnSeqKey) (release func(), err error) {
	for {
		s.mu.Lock()
		ch, busy := s.busy[k]
		if !busy {
			if s.busy == nil {
				s.busy = map[txnSeqKey]chan struct{}{}
			}
			ch = make(chan struct{})
			s.busy[k] = ch
			s.mu.Unlock()
			return func() {
				s.mu.Lock()
				delete(s.busy, k)
				s.mu.Unlock()
				close(ch)
			}, nil
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

type txnSeq struct {
	epoch   int16
	lastSeq int32 // -1: none in this epoch
}

// next returns the base sequence of the producer's next batch.
func (s *txnSequences) next(p int32, pid int64, epoch int16) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[p][pid]; ok && st.epoch == epoch && st.lastSeq >= 0 {
		return st.lastSeq + 1
	}
	return 0
}

// appended records a written batch ending at lastSeq.
func (s *txnSequences) appended(p int32, pid int64, epoch int16, lastSeq int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[int32]map[int64]txnSeq{}
	}
	if s.m[p] == nil {
		s.m[p] = map[int64]txnSeq{}
	}
	s.m[p][pid] = txnSeq{epoch: epoch, lastSeq: lastSeq}
}

// marker records a marker of the producer: a newer epoch has no sequence yet.
func (s *txnSequences) marker(p int32, pid int64, epoch int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[p][pid]; ok && epoch > st.epoch {
		s.m[p][pid] = txnSeq{epoch: epoch, lastSeq: -1}
	}
}

// reset forgets partition p (before it is loaded again).
func (s *txnSequences) reset(p int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, p)
}
