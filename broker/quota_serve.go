package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/quota"
	"samsa/broker/server"
	"samsa/broker/wire"
)

// Client quota enforcement, request side (Kafka 2.8 KafkaApis
// handleProduceRequest / handleFetchRequest with ClientQuotaManager):
//   - Produce: the request's size (header and body, Kafka's
//     request.sizeInBytes) is recorded once the request is handled; over
//     the quota, the answer carries throttle_time_ms (v1+) and the
//     connection is muted for that long (also with acks=0, which has no
//     answer, and for an acks=all answer still waiting for replication).
//   - Fetch from consumers (replica_id < 0; followers are never client
//     throttled): max_bytes (v3+) is capped to what the quota allows over
//     the quota window (Kafka's getMaxValueInQuotaWindow), then the answer's
//     size is recorded; over the quota, the bytes are taken back out of the
//     rate, the answer is an empty one carrying throttle_time_ms and the
//     connection is muted for that long. BytesOutPerSec counts only what
//     is sent (Kafka marks it from the response it sends), so the handler
//     holds its marks (request.heldBytesOut) until the quota has decided.
//   - Every request version is answered at once and the connection muted
//     (KIP-219, Kafka 2.0+): clients that honour throttle_time_ms (Produce
//     v6+, Fetch v8+) wait by themselves; older ones find their next
//     request unread until the mute ends, so their answers come that much
//     later.
// The user is the connection's principal name (ANONYMOUS on PLAINTEXT;
// the SASL user or the mapped certificate DN otherwise), sanitized as the
// /config/users entity names are.

// serveWithQuota handles a request while any client quota is configured;
// handler.Serve calls it only then. It combines the byte-rate throttle of
// Produce and consumer Fetch, the controller mutation throttle of
// CreateTopics, CreatePartitions and DeleteTopics and the request-time
// throttle of every non-exempt request as Kafka's KafkaApis does: the
// answer carries the largest (a throttled consumer fetch is answered
// empty, its bytes taken back out of the byte rate) and the connection is
// muted for that long.
func (b *Broker) serveWithQuota(c *server.Conn, req *wire.Request, row api, r *request) (kmsg.Response, error) {
	timed := b.quotas.Enabled(quota.Request)
	var start time.Time
	if timed {
		start = time.Now()
		r.quotaTimed = true
	}
	user, client := sanitize(r.principal.Name), req.ClientIDString()
	r.mutation = b.newMutationQuota(req, user, client)
	resp, bandwidthMs, fetchHeld, err := b.serveByteRate(req, row, r, user, client)
	if err != nil {
		return resp, err
	}
	throttle := max(bandwidthMs, r.mutation.ThrottleTime())
	if timed {
		nanos := time.Since(start) - r.parked
		if b.quotaExempt(req, row, r) {
			b.quotas.RecordExempt(quota.NanosToPercent(int64(nanos)))
		} else {
			h := b.quotas.Get(quota.Request, user, client)
			ms := h.Record(quota.NanosToPercent(int64(nanos)))
			h.Throttled(ms)
			throttle = max(throttle, ms)
		}
	}
	if fetchHeld != nil {
		if throttle > 0 {
			fetchHeld.h.Unrecord(fetchHeld.size) // an empty answer goes out
		} else {
			for _, tb := range *fetchHeld.marks {
				b.mtr.fetched(tb.topic, false, tb.size)
			}
		}
	}
	if throttle <= 0 {
		return resp, nil
	}
	c.Mute(time.Duration(throttle) * time.Millisecond)
	if fetchHeld != nil {
		return throttledFetchResponse(req.Body.(*kmsg.FetchRequest), throttleMillis(throttle)), nil
	}
	return withThrottle(resp, throttleMillis(throttle)), nil
}

// heldFetch is a consumer fetch's byte-rate record, kept until the
// request's throttle is known.
type heldFetch struct {
	h     quota.Handle
	size  float64
	marks *[]topicBytes
}

// serveByteRate handles the request, recording Produce request bytes and
// consumer Fetch response bytes against producer_byte_rate and
// consumer_byte_rate (Kafka's ClientQuotaManager), and returns the
// byte-rate throttle time; for a recorded consumer fetch, the record the
// caller settles.
func (b *Broker) serveByteRate(req *wire.Request, row api, r *request, user, client string) (kmsg.Response, int64, *heldFetch, error) {
	switch body := req.Body.(type) {
	case *kmsg.ProduceRequest:
		h := b.quotas.Get(quota.Produce, user, client)
		resp, err := b.serveRow(row, r)
		if err != nil || !h.Active() {
			return resp, 0, nil, err
		}
		ms := h.Record(float64(len(req.Frame)))
		h.Throttled(ms)
		return resp, ms, nil, nil
	case *kmsg.FetchRequest:
		if body.ReplicaID >= 0 {
			resp, err := b.serveRow(row, r)
			return resp, 0, nil, err
		}
		h := b.quotas.Get(quota.Fetch, user, client)
		if !h.Active() {
			resp, err := b.serveRow(row, r)
			return resp, 0, nil, err
		}
		capFetchToQuotaWindow(body, h.MaxValueInWindow())
		var marks []topicBytes
		r.heldBytesOut = &marks
		resp, err := b.serveRow(row, r)
		if err != nil || resp == nil {
			return resp, 0, nil, err
		}
		held := &heldFetch{h: h, size: float64(responseSize(req, resp)), marks: &marks}
		ms := h.Record(held.size)
		h.Throttled(ms)
		return resp, ms, held, nil
	}
	resp, err := b.serveRow(row, r)
	return resp, 0, nil, err
}

// throttleMillis clamps a throttle time to throttle_time_ms's int32.
func throttleMillis(ms int64) int32 { return int32(min(ms, math.MaxInt32)) }

// capFetchToQuotaWindow lowers a consumer fetch's max_bytes (v3+) to the
// most its quota lets it receive without a certain throttle, and min_bytes
// to at most that (Kafka caps fetchMaxBytes and fetchMinBytes the same
// way).
func capFetchToQuotaWindow(req *kmsg.FetchRequest, window float64) {
	if req.Version < 3 || window >= math.MaxInt32 {
		return
	}
	limit := int32(max(window, 1))
	if req.MaxBytes <= 0 || req.MaxBytes > limit {
		req.MaxBytes = limit
	}
	req.MinBytes = min(req.MinBytes, req.MaxBytes)
}

// withThrottle sets throttle_time_ms on a produce answer; an acks=all
// answer still waiting for replication gets it once complete.
func withThrottle(resp kmsg.Response, ms int32) kmsg.Response {
	switch r := resp.(type) {
	case nil:
		return nil
	case server.Pending:
		return throttledPending{Pending: r, ms: ms}
	case kmsg.SetThrottleResponse:
		r.SetThrottle(ms)
	}
	return resp
}

// throttledPending is a pending answer that carries a throttle time.
type throttledPending struct {
	server.Pending
	ms int32
}

// Wait implements server.Pending.
func (p throttledPending) Wait(ctx context.Context) (kmsg.Response, error) {
	resp, err := p.Pending.Wait(ctx)
	if t, ok := resp.(kmsg.SetThrottleResponse); ok && err == nil {
		t.SetThrottle(p.ms)
	}
	return resp, err
}

// throttledFetchResponse is the answer to a throttled consumer fetch: no
// partitions and the throttle time (Kafka's
// FetchContext.getThrottledResponse; sessions are not kept, so session id
// 0).
func throttledFetchResponse(req *kmsg.FetchRequest, ms int32) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.ThrottleMillis = ms
	resp.Topics = []kmsg.FetchResponseTopic{}
	return resp
}

// responseSize returns the size of resp's frame without its size prefix
// (response header and body; Kafka's FetchResponse.sizeOf). A spliced
// fetch answer is sized without reading its file regions: wire writes the
// frame's size prefix first, which the probe keeps before stopping it.
func responseSize(req *wire.Request, resp kmsg.Response) int {
	if w, ok := resp.(wire.ResponseWriterTo); ok {
		var p sizeProbe
		if err := w.WriteResponse(&p, req); !errors.Is(err, errProbeDone) {
			return 0 // the real write fails the same way and closes the connection
		}
		return int(binary.BigEndian.Uint32(p.prefix[:]))
	}
	return len(wire.AppendResponse(nil, req, resp)) - 4
}

// errProbeDone stops a response write once its size prefix is known.
var errProbeDone = errors.New("broker: response size known")

// sizeProbe is an io.Writer that keeps the first four bytes written (a
// frame's size prefix) and then refuses the rest.
type sizeProbe struct {
	prefix [4]byte
	n      int
}

// Write implements io.Writer.
func (p *sizeProbe) Write(b []byte) (int, error) {
	k := copy(p.prefix[p.n:], b)
	p.n += k
	if p.n == len(p.prefix) {
		return k, errProbeDone
	}
	return k, nil
}
