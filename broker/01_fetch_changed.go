package broker

// Fetch: v0-12
//
// The changed-only incremental fetch of a session (v7+, KIP-227; the rest
// of the handler is in 01_fetch.go).
//
// An idle follower fetch of a big session is the broker's most frequent
// request (each follower fetcher sends one at least every
// replica.fetch.wait.max.ms). Kafka reads every partition of the session
// for it, twice. Here the session knows which of its partitions changed
// since they were last answered (broker/fetchsession: the fetch purgatory's
// Notify reaches Cache.Changed), so the fetch reads only those, the ones
// it names and the ones its last answer left hot, and parks on the
// session's own wake-up channel instead of one purgatory key per
// partition. An idle fetch of 3,000 partitions reads none of them.
//
// The answer is Kafka's: a partition left out would have answered what
// its client was last told (same high watermark, log start and last stable
// offsets, no records, no error), which an incremental response omits.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/fetchsession"
	"samsa/broker/purgatory"
)

// serveChanged reads the examined partitions of x and, when they have less
// than min_bytes, waits until one of the session's partitions changes (and
// reads the grown set) or max_wait_ms ends (and reads the examined set
// once more, Kafka's DelayedFetch.onComplete). It fails only when the
// connection is closing.
func (b *Broker) serveChanged(r *request, req *kmsg.FetchRequest, resp *kmsg.FetchResponse, x *fetchsession.Context) (fetchPlan, error) {
	plan := b.planFetch(r, req, resp, sessionTopics(x))
	if plan.done() || req.MaxWaitMillis <= 0 {
		return plan, nil
	}
	deadline := b.opts.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	unpark := r.park() // request_percentage leaves the wait out (quota_request.go)
	defer unpark()
	for {
		err := b.replicas.Fetch.WaitChan(r.ctx, deadline, x.Wake(), func() bool { return x.Grow() || b.stopping.Load() })
		switch {
		case errors.Is(err, purgatory.ErrTimeout):
			plan.read()
			return plan, nil
		case err != nil:
			return plan, err
		}
		plan = b.planFetch(r, req, resp, sessionTopics(x))
		if plan.done() || b.stopping.Load() {
			return plan, nil
		}
	}
}

// done reads the plan's partitions and reports whether the fetch is
// answered now: a read found enough, or every examined partition is
// refused by the authorizer. An empty plan (nothing changed) waits.
func (p *fetchPlan) done() bool {
	if len(p.parts) == 0 {
		return p.req.MinBytes <= 0 || p.b.stopping.Load()
	}
	return p.read() || p.allowed == 0
}

// hot reports, for each partition in plan order, whether the session must
// examine it again on its next fetch even without a change notification:
// it had records, an error, a replication throttle, or records it could not
// send now (a byte limit): ReadReady still says a read would find some.
func (p *fetchPlan) hot() []bool {
	out := make([]bool, len(p.parts))
	for i := range p.parts {
		fp := &p.parts[i]
		out[i] = fp.size > 0 || fp.err != nil || fp.throttled || fp.part == nil ||
			fp.part.ReadReady(p.params(fp, 0, false))
	}
	return out
}
