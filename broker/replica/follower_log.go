package replica

import (
	"github.com/sirupsen/logrus"

	"samsa/broker/record"
)

// The follower side of a Partition: what the fetcher applies to the local
// log (truncation by leader epoch, realignment, appends).

// latestLocalEpoch returns the last leader epoch in the local log's epoch
// cache (-1 when empty).
func (p *Partition) latestLocalEpoch() int32 {
	l := p.Log()
	if l == nil {
		return -1
	}
	return l.LeaderEpochCache().LatestEpoch()
}

// followingLocked reports whether p still follows with leaderEpoch.
func (p *Partition) followingLocked(leaderEpoch int32) bool {
	return p.mu.data != nil && p.mu.leader >= 0 && p.mu.leader != p.m.cfg.BrokerID && p.mu.leaderEpoch == leaderEpoch
}

// truncateForFollower truncates the local log by the leader's answer to an
// OffsetsForLeaderEpoch query (KIP-101/KIP-279, Kafka's
// AbstractFetcherThread.getOffsetTruncationState): to the end offset of the
// largest common epoch, never past the local log end. The leader answers
// with the largest epoch it knows at or below the one asked; when that is
// an epoch this replica also has, the target is the smaller of the two
// replicas' end offsets for it, and when it is not, the end offset of this
// replica's largest epoch below it — otherwise a replica that led briefly
// (fast double failover, KAFKA-6361) keeps batches of an epoch the new
// leader never had. An unknown epoch (-1) falls back to the high
// watermark, as Kafka does.
func (p *Partition) truncateForFollower(leaderEpoch int32, eo EpochEndOffset) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.followingLocked(leaderEpoch) {
		return nil
	}
	l := p.mu.data
	target := eo.EndOffset
	if eo.LeaderEpoch < 0 || target < 0 {
		target = l.HighWatermark()
	} else if localEpoch, localEnd := l.EndOffsetForEpoch(eo.LeaderEpoch); localEnd >= 0 {
		if localEpoch != eo.LeaderEpoch {
			target = localEnd
		} else {
			target = min(target, localEnd)
		}
	}
	if target >= l.LogEndOffset() {
		return nil
	}
	p.log.WithFields(logrus.Fields{"offset": target, "log_end_offset": l.LogEndOffset()}).
		Info("truncating follower log by leader epoch")
	return p.truncatedLocked(l.TruncateTo(target))
}

func (p *Partition) realignForFollower(leaderEpoch int32, leaderStart, leaderEnd int64) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.followingLocked(leaderEpoch) {
		return nil
	}
	l := p.mu.data
	leo := l.LogEndOffset()
	switch {
	case leaderEnd < leo:
		p.log.WithFields(logrus.Fields{"offset": leaderEnd, "log_end_offset": leo}).
			Warn("follower ahead of the leader; truncating to the leader's log end")
		return p.truncatedLocked(l.TruncateTo(max(leaderEnd, l.LogStartOffset())))
	case leaderStart > leo:
		p.log.WithField("offset", leaderStart).Warn("follower behind the leader's log start; restarting the log there")
		return p.truncatedLocked(l.TruncateFullyAndStartAt(leaderStart))
	}
	return nil
}

// truncatedLocked tells the fetch purgatory, and through its observer the
// fetch sessions holding p, that p's log was truncated (whether or not the
// truncation then failed part way), and returns err. A truncation lowers
// the log end, the high watermark and the last stable offset (and a full
// one moves the log start and raises the high watermark to it): a fetch
// session that last told a consumer (KIP-392, a read from this follower)
// the old values must answer the partition again, as Kafka's incremental
// fetch does when the high watermark or log start offset changed. Storage
// tells only of a moved log start, and before a full truncation has set
// the high watermark, so this notice comes after the whole change.
func (p *Partition) truncatedLocked(err error) error {
	p.m.Fetch.Notify(p.tp)
	return err
}

// appendAsFollower appends the whole batches of r and follows the
// leader's high watermark (Kafka Partition.appendRecordsToFollower).
func (p *Partition) appendAsFollower(leaderEpoch int32, r *FollowerFetchResult) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.followingLocked(leaderEpoch) {
		return nil
	}
	l := p.mu.data
	// Consumers parked on this follower (KIP-392 reads) and the fetch
	// sessions holding it hear of a moved high watermark or log start
	// (followed from the leader, or an empty log restarted at the leader's
	// first batch) once, after the whole change.
	hw0, start0 := l.HighWatermark(), l.LogStartOffset()
	defer func() {
		if l.HighWatermark() != hw0 || l.LogStartOffset() != start0 {
			p.m.Fetch.Notify(p.tp)
		}
	}()
	whole := wholeBatches(r.Records)
	if len(whole) > 0 {
		if _, err := l.AppendAsFollower(whole); err != nil {
			return err
		}
	}
	if hw := min(r.HighWatermark, l.LogEndOffset()); hw > l.HighWatermark() {
		l.SetHighWatermark(hw)
	}
	// Follow the leader's log start (DeleteRecords, retention), as Kafka's
	// maybeIncrementLogStartOffset on followers; never past our HW.
	if r.LogStartOffset > l.LogStartOffset() && r.LogStartOffset <= l.HighWatermark() {
		if _, err := l.DeleteRecordsBefore(r.LogStartOffset); err != nil {
			return err
		}
	}
	return nil
}

// wholeBatches returns the prefix of buf made of complete batches (a fetch
// response may end with a partial batch).
func wholeBatches(buf []byte) []byte {
	rest := buf
	for len(rest) > 0 {
		_, next, err := record.NextBatch(rest)
		if err != nil {
			break
		}
		rest = next
	}
	return buf[:len(buf)-len(rest)]
}
