package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/quota"
	"samsa/broker/quota/throttle"
	"samsa/broker/server"
	"samsa/broker/wire"
	"samsa/zkutil"
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
	}
	user, client := zkutil.Sanitize(r.principal.Name), req.ClientIDString()
	r.mutation = b.newMutationQuota(req, user, client)
	resp, bandwidthMs, fetchHeld, err := b.serveByteRate(req, row, r, user, client)
	if err != nil {
		return resp, err
	}
	thr := max(bandwidthMs, r.mutation.ThrottleTime())
	if timed {
		nanos := time.Since(start) - r.parked
		if b.quotaExempt(req, row, r) {
			b.quotas.RecordExempt(quota.NanosToPercent(int64(nanos)))
		} else {
			h := b.quotas.Get(quota.Request, user, client)
			ms := h.Record(quota.NanosToPercent(int64(nanos)))
			h.Throttled(ms)
			thr = max(thr, ms)
		}
	}
	if fetchHeld != nil {
		if thr > 0 {
			fetchHeld.h.Unrecord(fetchHeld.size) // an empty answer goes out
		} else {
			for _, tb := range *fetchHeld.marks {
				b.mtr.fetched(tb.topic, false, tb.size)
			}
		}
	}
	if thr <= 0 {
		return resp, nil
	}
	c.Mute(time.Duration(thr) * time.Millisecond)
	if fetchHeld != nil {
		return throttle.EmptyFetch(req.Body.(*kmsg.FetchRequest), throttle.Millis(thr)), nil
	}
	return throttle.Set(resp, throttle.Millis(thr)), nil
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
		if !h.Active() && !b.quotas.Enabled(quota.Request) {
			resp, err := b.serveRow(row, r)
			return resp, 0, nil, err
		}
		// A consumer fetch throttled by either quota is answered empty
		// (KafkaApis: getThrottledResponse whenever the larger throttle is
		// positive), so its BytesOutPerSec marks wait for the decision.
		throttle.CapFetch(body, h.MaxValueInWindow())
		var marks []topicBytes
		r.heldBytesOut = &marks
		resp, err := b.serveRow(row, r)
		if err != nil || resp == nil {
			return resp, 0, nil, err
		}
		held := &heldFetch{h: h, marks: &marks}
		if !h.Active() {
			return resp, 0, held, nil
		}
		held.size = float64(throttle.ResponseSize(req, resp))
		ms := h.Record(held.size)
		h.Throttled(ms)
		return resp, ms, held, nil
	}
	resp, err := b.serveRow(row, r)
	return resp, 0, nil, err
}
