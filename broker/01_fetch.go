package broker

// Fetch: v0-12
//
// Behaviour:
//   - Consumers (replica_id -1, and the debugging consumer -2 of
//     kafka-replica-verification) read up to the high watermark, or with
//     isolation_level 1 (read_committed, v4+) up to the last stable offset
//     with the aborted transactions of the returned range (fetch_txn.go).
//     Every v4+ answer carries the partition's last stable offset. v0-10 must fetch from the leader
//     (NOT_LEADER_OR_FOLLOWER elsewhere). v11+ (KIP-392) may also fetch from
//     a follower, which answers from its own log up to its own high
//     watermark after checking current_leader_epoch against its view of the
//     epoch, as Kafka 2.8. preferred_read_replica is always -1: Kafka 2.8's
//     default replica.selector.class is unset, so it never names one, and
//     Samsa offers no selector.
//   - Followers (replica_id >= 0) read up to the log end; the leader
//     records the follower's fetch offset as its log end offset and moves
//     the high watermark to the smallest log end offset in the ISR
//     (broker/replica), which completes parked acks=all produces.
//   - max_wait_ms/min_bytes: when less than min_bytes is available the
//     request parks in the fetch purgatory and is re-checked on every
//     append or HW move of its partitions until max_wait_ms ends (or the
//     connection closes). As Kafka's DelayedFetch, a check compares
//     offsets (replica.Partition.ReadReady: the fetch offset against the
//     log end, high watermark or last stable offset, and the error cases)
//     and reads only when a partition may have records or an error; the
//     answer comes from one last read when the wait ends, so an idle long
//     poll reads each partition twice, not three times.
//   - Size limits: partition_max_bytes per partition and max_bytes (v3+)
//     overall; the first batch of the first non-empty partition is returned
//     even when larger (KIP-74). Only whole batches are sent. v0-2 get the
//     same (Kafka cut a too-large message there, which old clients answered
//     by raising their fetch size; a whole batch lets them progress too).
//   - v4+: record batches go from the segment files to the socket with
//     sendfile (wire.Spliced + storage.FileRegion), never through user
//     space. v0-3: batches are read and down-converted to message sets
//     (magic 0 for v0-1, magic 1 for v2-3).
//   - Replication throttle (leader side): a follower outside the ISR
//     fetching a partition listed in leader.replication.throttled.replicas
//     for this broker gets at most what leader.replication.throttled.rate
//     leaves (replica.Throttle), and no data while the quota is used up.
//   - Fetch sessions (KIP-227, broker/fetchsession, fetch_session.go) as
//     Kafka 2.8's FetchManager: a full fetch with epoch 0 gets a session
//     when max.incremental.fetch.session.cache.slots allows (eviction:
//     stale, then by privilege and size); epoch -1 is sessionless; an
//     incremental fetch reads the whole session and answers only the
//     partitions with records, errors or a changed high watermark or log
//     start offset; unknown sessions answer FETCH_SESSION_ID_NOT_FOUND,
//     wrong epochs INVALID_FETCH_SESSION_EPOCH (top level, no partitions).
//   - Authorization (Kafka 2.8 KafkaApis): a fetch with replica_id >= 0
//     needs ClusterAction on the cluster, else every partition answers
//     TOPIC_AUTHORIZATION_FAILED (CVE-2018-1288: a client cannot pose as a
//     follower); a consumer fetch needs Read on each topic
//     (TOPIC_AUTHORIZATION_FAILED, decided before the existence check so an
//     unauthorised client cannot probe for topics). Refused partitions are
//     not read and do not end a long poll early.
//   - Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_FOR_PARTITION,
//     OFFSET_OUT_OF_RANGE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH.
//
// Version notes:
//   - v3: max_bytes (KIP-74). v4: isolation level, last stable offset,
//     aborted transactions (KIP-98), record batch v2.
//   - v5: log_start_offset. v7: sessions (KIP-227; see above).
//   - v9: current leader epoch (KIP-320). v11: rack and preferred read
//     replica (KIP-392: follower reads; rack ignored). v12: flexible; last
//     fetched epoch accepted, diverging epoch never set (followers use
//     OffsetsForLeaderEpoch).

import (
	"errors"
	"io"
	"math"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/fetchsession"
	"samsa/broker/purgatory"
	"samsa/broker/record"
	"samsa/broker/replica"
	"samsa/broker/storage"
	"samsa/broker/wire"
	"samsa/kafka"
)

// fetchPart is one requested partition and what the last read found.
type fetchPart struct {
	tp  kafka.TopicPartition
	req kmsg.FetchRequestTopicPartition
	res replica.ReadResult
	// part is the partition the last read found (nil if none), for the
	// purgatory's cheap checks.
	part     *replica.Partition
	err      error
	size     int64
	topicIdx int // index of the topic in the response
	// denied: refused by the authorizer; err holds the answer, never read.
	denied bool
	// throttled: the answer counts against the leader replication
	// throttle (a throttled partition fetched by an out-of-sync follower).
	throttled bool
}

func (b *Broker) handleFetch(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.FetchRequest)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	// KIP-227 (fetch_session.go): an incremental fetch reads its whole
	// session; the response is trimmed by finishFetchSession.
	reqTopics := req.Topics
	var session *fetchsession.Context
	if req.Version >= 7 {
		session = b.fetchSessionContext(r, req)
	}
	if session != nil {
		switch session.Kind {
		case fetchsession.Error:
			resp.ErrorCode = session.ErrorCode
			return resp, nil
		case fetchsession.Incremental:
			reqTopics = sessionTopics(session)
		}
	}
	var plan fetchPlan
	if session != nil && session.Wake() != nil {
		// A changed-only incremental fetch (01_fetch_changed.go).
		var err error
		if plan, err = b.serveChanged(r, req, resp, session); err != nil {
			return nil, err // the connection is closing
		}
	} else {
		plan = b.planFetch(r, req, resp, reqTopics)
		if !plan.read() && req.MaxWaitMillis > 0 && plan.allowed > 0 {
			if err := plan.wait(r); err != nil {
				return nil, err // the connection is closing
			}
		}
	}
	spliced := b.buildFetchResponse(r, req, resp, plan.parts)
	if session != nil {
		var hot []bool
		if session.Kind == fetchsession.Incremental {
			hot = plan.hot()
		}
		finishFetchSession(session, resp, hot)
	}
	if spliced != nil && spliced.Regions() > 0 {
		return spliced, nil
	}
	return resp, nil
}

// fetchPlan is one fetch request's partitions and the limits every read of
// them applies (the first read, and each one the purgatory runs).
type fetchPlan struct {
	b             *Broker
	req           *kmsg.FetchRequest
	parts         []fetchPart
	allowed       int // partitions the authorizer did not refuse
	maxBytes      int64
	replicaID     int32
	anyReplica    bool
	readCommitted bool
	deadline      time.Time // of the wait; ready answers false from then
}

// planFetch lists the partitions to read, in request order, and lays out the
// response's topics for them.
func (b *Broker) planFetch(r *request, req *kmsg.FetchRequest, resp *kmsg.FetchResponse, reqTopics []kmsg.FetchRequestTopic) fetchPlan {
	n := 0
	for _, t := range reqTopics {
		n += len(t.Partitions)
	}
	// One allocation each for the parts and the response's topics and
	// partitions (a follower sends one every few milliseconds).
	parts := make([]fetchPart, 0, n)
	resp.Topics = make([]kmsg.FetchResponseTopic, 0, len(reqTopics))
	respParts := make([]kmsg.FetchResponseTopicPartition, 0, n)
	fetchAuth, allowed := b.fetchAuthorizer(r, req.ReplicaID), n
	for ti, t := range reqTopics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = respParts[len(respParts) : len(respParts) : len(respParts)+len(t.Partitions)]
		respParts = respParts[:len(respParts)+len(t.Partitions)]
		resp.Topics = append(resp.Topics, rt)
		denied := !fetchAuth.ok(t.Topic)
		for _, p := range t.Partitions {
			fp := fetchPart{tp: kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}, req: p, topicIdx: ti}
			if denied {
				fp.denied, fp.err = true, kerr.TopicAuthorizationFailed
				allowed--
			}
			parts = append(parts, fp)
		}
	}
	maxBytes := int64(math.MaxInt32)
	if req.Version >= 3 && req.MaxBytes > 0 {
		maxBytes = int64(req.MaxBytes)
	}
	replicaID := req.ReplicaID
	if replicaID < 0 {
		replicaID = replica.ConsumerReplicaID
	}
	return fetchPlan{b: b, req: req, parts: parts, allowed: allowed, maxBytes: maxBytes, replicaID: replicaID,
		// KIP-392: Kafka 2.8 serves consumer fetches (-1, and the debugging -2)
		// of v11+ from followers too (ReplicaManager.fetchMessages:
		// fetchOnlyFromLeader = isFromFollower || clientMetadata.isEmpty, the
		// client metadata being set from v11).
		anyReplica:    req.ReplicaID < 0 && req.Version >= 11,
		readCommitted: fetchReadCommitted(req),
	}
}

// read reads every partition once and reports whether the request can be
// answered now.
func (p *fetchPlan) read() bool {
	b, req := p.b, p.req
	var total int64
	anyErr := false
	for i := range p.parts {
		fp := &p.parts[i]
		if fp.denied {
			continue
		}
		remaining := p.maxBytes - total
		limit := min(int64(max(fp.req.PartitionMaxBytes, 0)), max(remaining, 0))
		rp := p.params(fp, int(limit), total == 0)
		fp.throttled = b.replicas.LeaderThrottled(fp.tp, p.replicaID)
		quota := -1
		if fp.throttled {
			// Replication throttle (leader side): no data while the
			// quota is used up, at most what is left otherwise.
			quota = b.replicas.LeaderThrottle.Available()
			rp.MaxBytes = min(rp.MaxBytes, quota)
			rp.MinOneBatch = rp.MinOneBatch && quota > 0
		}
		fp.res, fp.part, fp.err = b.replicas.ReadFrom(fp.tp, rp)
		if quota == 0 {
			fp.res.Records = nil
		}
		fp.size = 0
		for _, g := range fp.res.Records {
			fp.size += g.Len
		}
		total += fp.size
		if fp.err != nil {
			anyErr = true
		}
	}
	return anyErr || total >= int64(req.MinBytes) || total >= p.maxBytes || b.stopping.Load()
}

// params are the read parameters of one partition.
func (p *fetchPlan) params(fp *fetchPart, maxBytes int, minOneBatch bool) replica.ReadParams {
	rp := replica.ReadParams{ReplicaID: p.replicaID, FetchOffset: fp.req.FetchOffset,
		MaxBytes: maxBytes, CurrentLeaderEpoch: -1,
		MinOneBatch: minOneBatch, FollowerLogStartOffset: -1, AnyReplica: p.anyReplica,
		ReadCommitted: p.readCommitted}
	if p.req.Version >= 5 {
		rp.FollowerLogStartOffset = fp.req.LogStartOffset
	}
	if p.req.Version >= 9 {
		rp.CurrentLeaderEpoch = fp.req.CurrentLeaderEpoch
	}
	return rp
}

// ready is the purgatory's check (Kafka's DelayedFetch.tryComplete): it reads
// again only when some partition may have records or an error, which
// replica.ReadReady tells from offsets alone. wait only runs after a read
// that found less than min_bytes (min_bytes >= 1) and no error, so a round
// in which no partition is ready would read nothing and answer false: an
// idle long poll costs one offset comparison per partition, not a read.
//
// At or past the deadline it answers false without looking: wait then reads
// once more for the answer, as the read this check would do.
func (p *fetchPlan) ready() bool {
	if p.b.stopping.Load() {
		return p.read()
	}
	if !time.Now().Before(p.deadline) {
		return false
	}
	for i := range p.parts {
		fp := &p.parts[i]
		if fp.denied {
			continue
		}
		if fp.part == nil || fp.part.ReadReady(p.params(fp, 0, false)) {
			return p.read()
		}
	}
	return false
}

// wait parks the fetch in the purgatory until a read can answer it or
// max_wait_ms ends; it fails only when the connection is closing.
func (p *fetchPlan) wait(r *request) error {
	keys := make([]kafka.TopicPartition, len(p.parts))
	for i := range p.parts {
		keys[i] = p.parts[i].tp
	}
	deadline := p.b.opts.Now().Add(time.Duration(p.req.MaxWaitMillis) * time.Millisecond)
	p.deadline = deadline
	unpark := r.park() // request_percentage leaves the wait out (quota_request.go)
	err := p.b.replicas.Fetch.Wait(r.ctx, deadline, keys, p.ready)
	unpark()
	if errors.Is(err, purgatory.ErrTimeout) {
		// The final read (Kafka's DelayedFetch.onComplete): the answer
		// carries the high watermark, log start and last stable offsets
		// as they are now, and whatever arrived without a Notify.
		p.read()
		return nil
	}
	return err
}

// buildFetchResponse fills the response's partitions from the reads (v4+:
// record regions left for sendfile, returned as the Spliced writer).
func (b *Broker) buildFetchResponse(r *request, req *kmsg.FetchRequest, resp *kmsg.FetchResponse, parts []fetchPart) *wire.Spliced {
	var spliced *wire.Spliced
	if req.Version >= 4 {
		spliced = wire.NewSpliced(resp)
	}
	for i := range parts {
		fp := &parts[i]
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition = fp.tp.Partition
		rp.PreferredReadReplica = -1
		// Kafka sends empty, never null, records (kafka-python cannot read
		// a null).
		rp.RecordBatches = []byte{}
		switch {
		case fp.denied:
			rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
		case fp.err != nil:
			b.failed(fp.tp, false)
			rp.ErrorCode = b.errorCode(fp.err)
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
		default:
			rp.HighWatermark = fp.res.HighWatermark
			rp.LastStableOffset = fp.res.LastStableOffset
			rp.LogStartOffset = fp.res.LogStartOffset
			setAbortedTransactions(&rp, fp.res)
			if fp.size > 0 {
				b.fetchedRecords(r, req, fp, &rp, spliced)
			}
		}
		t := &resp.Topics[fp.topicIdx]
		t.Partitions = append(t.Partitions, rp)
	}
	return spliced
}

// fetchedRecords accounts one partition's records (BytesOutPerSec, the
// replication throttle) and places them in its answer.
func (b *Broker) fetchedRecords(r *request, req *kmsg.FetchRequest, fp *fetchPart, rp *kmsg.FetchResponseTopicPartition, spliced *wire.Spliced) {
	if r.heldBytesOut != nil {
		*r.heldBytesOut = append(*r.heldBytesOut, topicBytes{fp.tp.Topic, fp.size})
	} else {
		b.mtr.fetched(fp.tp.Topic, req.ReplicaID >= 0, fp.size)
	}
	if fp.throttled {
		b.replicas.LeaderThrottle.Record(fp.size)
	}
	if spliced != nil {
		rp.RecordBatches = spliced.Placeholder(regions(fp.res.Records))
		return
	}
	msgs, err := downConvert(fp.res.Records, req.Version, fp.req.FetchOffset)
	if err != nil {
		rp.ErrorCode = b.errorCode(err)
	}
	rp.RecordBatches = msgs
}

// regions adapts file regions to one wire.Region.
type regions []storage.FileRegion

// Len implements wire.Region.
func (rs regions) Len() int64 {
	var n int64
	for _, g := range rs {
		n += g.Len
	}
	return n
}

// WriteTo implements wire.Region (sendfile for sockets).
func (rs regions) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, g := range rs {
		m, err := g.WriteTo(w)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// AppendTo implements wire.InlineRegion: small responses are read with
// pread and written with the rest of the frame in one write.
func (rs regions) AppendTo(dst []byte) ([]byte, error) {
	for _, g := range rs {
		start := len(dst)
		dst = slices.Grow(dst, int(g.Len))[:start+int(g.Len)]
		if _, err := g.File.ReadAt(dst[start:], g.Pos); err != nil {
			return dst[:start], err
		}
	}
	return dst, nil
}

// downConvert reads the batches and converts them to the message set
// format of fetch version v (magic 0 for v0-1, 1 for v2-3).
func downConvert(rs []storage.FileRegion, v int16, fetchOffset int64) ([]byte, error) {
	var buf []byte
	for _, g := range rs {
		start := len(buf)
		buf = append(buf, make([]byte, g.Len)...)
		if _, err := g.File.ReadAt(buf[start:], g.Pos); err != nil {
			return nil, err
		}
	}
	magic := record.MagicV0
	if v >= 2 {
		magic = record.MagicV1
	}
	return record.ConvertFromV2(buf, magic, record.DownConvertOptions{MinOffset: fetchOffset})
}
