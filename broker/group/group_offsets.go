package group

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"samsa/kafka"
)

// fillCodes returns n copies of code.
func fillCodes(n int, code int16) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = code
	}
	return out
}

// handleCommit is OffsetCommit on the group goroutine (Kafka's
// doCommitOffsets); reply gets one code per req.Offsets entry.
func (g *group) handleCommit(req CommitRequest, reply chan<- []int16) {
	n := len(req.Offsets)
	m := g.members[req.MemberID]
	switch {
	case g.is(Dead):
		reply <- fillCodes(n, kerr.CoordinatorNotAvailable.Code)
	case g.isStaticMemberFenced(req.MemberID, req.GroupInstanceID):
		reply <- fillCodes(n, kerr.FencedInstanceID.Code)
	case req.Generation < 0 && g.is(Empty):
		// The group only stores offsets in Kafka (no group management).
		g.storeOffsets(req, reply)
	case m == nil:
		reply <- fillCodes(n, kerr.UnknownMemberID.Code)
	case req.Generation != g.generation:
		reply <- fillCodes(n, kerr.IllegalGeneration.Code)
	case g.is(CompletingRebalance):
		reply <- fillCodes(n, kerr.RebalanceInProgress.Code)
	default: // Stable, PreparingRebalance
		g.scheduleHeartbeat(m, 0)
		g.storeOffsets(req, reply)
	}
}

// storeOffsets writes the commit and applies it once it is in the log
// (Kafka's GroupMetadataManager.storeOffsets).
func (g *group) storeOffsets(req CommitRequest, reply chan<- []int16) {
	now := g.c.clock.Now().UnixMilli()
	codes := make([]int16, len(req.Offsets))
	var kvs []kv
	var idx []int
	var vals []OffsetValue
	for i, o := range req.Offsets {
		if len(o.Metadata) > g.c.cfg.OffsetMetadataMaxBytes || len(o.Metadata) > maxStringLen || len(o.Topic) > maxStringLen {
			codes[i] = kerr.OffsetMetadataTooLarge.Code
			continue
		}
		v := OffsetValue{Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, CommitTimestamp: now, ExpireTimestamp: -1}
		if req.RetentionMs >= 0 {
			v.ExpireTimestamp = now + req.RetentionMs
		}
		kvs = append(kvs, kv{key: EncodeOffsetKey(g.id, o.Topic, o.Partition), value: EncodeOffsetValue(v)})
		idx = append(idx, i)
		vals = append(vals, v)
	}
	if len(kvs) == 0 {
		reply <- codes
		return
	}
	batch, err := g.c.buildBatch(kvs)
	if err != nil {
		for _, i := range idx {
			codes[i] = kerr.InvalidCommitOffsetSize.Code
		}
		reply <- codes
		return
	}
	g.enqueueAppend(&appendOp{
		batch: batch,
		done: func(err error) {
			code := appendErrorCode(err, true)
			for j, i := range idx {
				codes[i] = code
				if code == 0 && !g.is(Dead) {
					g.offsets[req.Offsets[i].TopicPartition] = offsetEntry{vals[j]}
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

// handleFetch is OffsetFetch on the group goroutine: the committed
// offsets of parts, or all of them when parts is nil. Commits still being
// written are not visible.
func (g *group) handleFetch(parts []kafka.TopicPartition) []FetchedOffset {
	if parts == nil {
		out := make([]FetchedOffset, 0, len(g.offsets))
		for tp, e := range g.offsets {
			out = append(out, fetched(tp, e))
		}
		sortFetched(out)
		return out
	}
	out := make([]FetchedOffset, len(parts))
	for i, tp := range parts {
		e, ok := g.offsets[tp]
		if !ok || g.is(Dead) {
			out[i] = noOffset(tp)
			continue
		}
		out[i] = fetched(tp, e)
	}
	return out
}

func fetched(tp kafka.TopicPartition, e offsetEntry) FetchedOffset {
	return FetchedOffset{TopicPartition: tp, Offset: e.Offset, LeaderEpoch: e.LeaderEpoch, Metadata: e.Metadata}
}

// noOffset is the answer for a partition without a committed offset.
func noOffset(tp kafka.TopicPartition) FetchedOffset {
	return FetchedOffset{TopicPartition: tp, Offset: -1, LeaderEpoch: -1}
}

func sortFetched(out []FetchedOffset) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
}

// describe is DescribeGroups for this group (Kafka's GroupMetadata.summary):
// member metadata and assignments only when Stable.
func (g *group) describe() GroupDescription {
	d := GroupDescription{Group: g.id, State: g.state.String(), ProtocolType: g.protocolType}
	stable := g.is(Stable)
	if stable {
		d.Protocol = g.protocol
	}
	for _, id := range g.order {
		m := g.members[id]
		md := MemberDescription{MemberID: id, GroupInstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
			Metadata: []byte{}, Assignment: []byte{}}
		if stable {
			md.Metadata, md.Assignment = m.metadata(g.protocol), m.assignment
		}
		d.Members = append(d.Members, md)
	}
	return d
}

// handleDelete is DeleteGroups for this group: an Empty group becomes Dead
// and its metadata and offsets get tombstones; the answer comes once they
// are written.
func (g *group) handleDelete(reply chan<- int16) {
	switch g.state {
	case Dead:
		reply <- kerr.GroupIDNotFound.Code
		return
	case Empty:
	default:
		reply <- kerr.NonEmptyGroup.Code
		return
	}
	kvs := []kv{{key: EncodeGroupKey(g.id)}}
	for tp := range g.offsets {
		kvs = append(kvs, kv{key: EncodeOffsetKey(g.id, tp.Topic, tp.Partition)})
	}
	g.offsets = map[kafka.TopicPartition]offsetEntry{}
	g.transition(Dead)
	g.log.Info("group: deleted")
	g.appendTombstones(kvs, func(code int16) { reply <- code })
}

// appendTombstones writes kvs and calls done with the outcome (from the
// group goroutine, or from the append goroutine if the group stopped).
func (g *group) appendTombstones(kvs []kv, done func(code int16)) {
	batch, err := g.c.buildBatch(kvs)
	if err != nil {
		done(kerr.UnknownServerError.Code)
		return
	}
	g.enqueueAppend(&appendOp{
		batch: batch,
		done:  func(err error) { done(appendErrorCode(err, false)) },
		abort: done,
	})
}

// handleDeleteOffsets is OffsetDelete (KIP-496, Kafka's
// handleDeleteOffsets): offsets of topics the group still subscribes to
// stay.
func (g *group) handleDeleteOffsets(parts []kafka.TopicPartition, reply chan<- DeleteOffsetsResult) {
	res := DeleteOffsetsResult{Codes: make([]int16, len(parts))}
	switch {
	case g.is(Dead):
		res.ErrorCode = kerr.GroupIDNotFound.Code
		reply <- res
		return
	case !g.is(Empty) && g.protocolType != consumerProtocolType:
		res.ErrorCode = kerr.NonEmptyGroup.Code
		reply <- res
		return
	}
	var kvs []kv
	for i, tp := range parts {
		if !g.is(Empty) && g.subscribed[tp.Topic] {
			res.Codes[i] = kerr.GroupSubscribedToTopic.Code
			continue
		}
		if _, ok := g.offsets[tp]; ok {
			delete(g.offsets, tp)
			kvs = append(kvs, kv{key: EncodeOffsetKey(g.id, tp.Topic, tp.Partition)})
		}
	}
	if len(kvs) == 0 {
		reply <- res
		return
	}
	g.appendTombstones(kvs, func(code int16) {
		if code != 0 {
			res.ErrorCode = code
		}
		reply <- res
	})
}

// DeleteOffsetsResult is OffsetDelete's output: a group-level code and one
// code per requested partition.
type DeleteOffsetsResult struct {
	ErrorCode int16
	Codes     []int16
}

// expireOffsets removes offsets past retention (Kafka 2.8's
// removeExpiredOffsets, KIP-211) and, if that leaves an Empty group with
// no offsets, deletes the group; tombstones are written for both.
func (g *group) expireOffsets(now time.Time, retention time.Duration) {
	if g.is(Dead) {
		return
	}
	nowMs, retMs := now.UnixMilli(), retention.Milliseconds()
	expired := func(e offsetEntry, base int64) bool {
		if e.ExpireTimestamp >= 0 {
			return nowMs >= e.ExpireTimestamp
		}
		return nowMs-base >= retMs
	}
	var kvs []kv
	for tp, e := range g.offsets {
		var exp bool
		switch {
		case g.protocolType == "":
			// A standalone consumer: each offset ages from its commit.
			exp = expired(e, e.CommitTimestamp)
		case g.is(Empty):
			// Offsets age from when the group became empty.
			exp = expired(e, g.stateTime.UnixMilli())
		case g.protocolType == consumerProtocolType && g.subsKnown:
			exp = !g.subscribed[tp.Topic] && expired(e, e.CommitTimestamp)
		}
		if exp {
			delete(g.offsets, tp)
			kvs = append(kvs, kv{key: EncodeOffsetKey(g.id, tp.Topic, tp.Partition)})
		}
	}
	if len(kvs) > 0 {
		g.log.WithField("offsets", len(kvs)).Info("group: removed expired offsets")
	}
	if g.is(Empty) && len(g.offsets) == 0 && len(g.members) == 0 {
		kvs = append(kvs, kv{key: EncodeGroupKey(g.id)})
		g.transition(Dead)
		g.log.Info("group: empty group with no offsets removed")
	}
	if len(kvs) > 0 {
		g.appendTombstones(kvs, func(code int16) {
			if code != 0 {
				g.log.WithField("error", code).Warn("group: failed to write tombstones of expired offsets")
			}
		})
	}
}

// removeDeletedOffsets drops the offsets of deleted partitions (Kafka's
// cleanupGroupMetadata with removeOffsets); an Empty group left without
// offsets becomes Dead. Tombstones are written for what was removed.
func (g *group) removeDeletedOffsets(deleted map[kafka.TopicPartition]bool) {
	if g.is(Dead) {
		return
	}
	var kvs []kv
	for tp := range g.offsets {
		if deleted[tp] {
			delete(g.offsets, tp)
			kvs = append(kvs, kv{key: EncodeOffsetKey(g.id, tp.Topic, tp.Partition)})
		}
	}
	if len(kvs) == 0 {
		return
	}
	g.log.WithField("offsets", len(kvs)).Info("group: removed offsets of deleted partitions")
	if g.is(Empty) && len(g.offsets) == 0 && len(g.members) == 0 {
		kvs = append(kvs, kv{key: EncodeGroupKey(g.id)})
		g.transition(Dead)
		g.log.Info("group: empty group with no offsets removed")
	}
	g.appendTombstones(kvs, func(code int16) {
		if code != 0 {
			g.log.WithField("error", code).Warn("group: failed to write tombstones of deleted partitions' offsets")
		}
	})
}
