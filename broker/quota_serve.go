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

// serveWithQuota handles a Produce or Fetch request while client quotas
// are configured; handler.Serve calls it only then.
func (b *Broker) serveWithQuota(c *server.Conn, req *wire.Request, row api, r *request) (kmsg.Response, error) {
	switch body := req.Body.(type) {
	case *kmsg.ProduceRequest:
		h := b.quotas.Get(quota.Produce, sanitize(r.principal.Name), req.ClientIDString())
		resp, err := row.handle(b, r)
		if err != nil || !h.Active() {
			return resp, err
		}
		ms := h.Record(float64(len(req.Frame)))
		if ms <= 0 {
			return resp, nil
		}
		h.Throttled(ms)
		c.Mute(time.Duration(ms) * time.Millisecond)
		return withThrottle(resp, throttleMillis(ms)), nil
	case *kmsg.FetchRequest:
		if body.ReplicaID >= 0 {
			return row.handle(b, r)
		}
		h := b.quotas.Get(quota.Fetch, sanitize(r.principal.Name), req.ClientIDString())
		if !h.Active() {
			return row.handle(b, r)
		}
		capFetchToQuotaWindow(body, h.MaxValueInWindow())
		var held []topicBytes
		r.heldBytesOut = &held
		resp, err := row.handle(b, r)
		if err != nil || resp == nil {
			return resp, err
		}
		size := float64(responseSize(req, resp))
		ms := h.Record(size)
		if ms <= 0 {
			for _, tb := range held {
				b.mtr.fetched(tb.topic, false, tb.size)
			}
			return resp, nil
		}
		h.Unrecord(size)
		h.Throttled(ms)
		c.Mute(time.Duration(ms) * time.Millisecond)
		return throttledFetchResponse(body, throttleMillis(ms)), nil
	}
	return row.handle(b, r)
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
