package throttle

import (
	"context"
	"encoding/binary"
	"errors"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/server"
	"samsa/broker/wire"
)

// Millis clamps a throttle time to throttle_time_ms's int32.
func Millis(ms int64) int32 { return int32(min(ms, math.MaxInt32)) }

// CapFetch lowers a consumer fetch's max_bytes (v3+) to the
// most its quota lets it receive without a certain throttle, and min_bytes
// to at most that (Kafka caps fetchMaxBytes and fetchMinBytes the same
// way).
func CapFetch(req *kmsg.FetchRequest, window float64) {
	if req.Version < 3 || window >= math.MaxInt32 {
		return
	}
	limit := int32(max(window, 1))
	if req.MaxBytes <= 0 || req.MaxBytes > limit {
		req.MaxBytes = limit
	}
	req.MinBytes = min(req.MinBytes, req.MaxBytes)
}

// Set sets throttle_time_ms on an answer that has it; a pending answer
// (acks=all produce waiting for replication) gets it once complete.
func Set(resp kmsg.Response, ms int32) kmsg.Response {
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

// EmptyFetch is the answer to a throttled consumer fetch: no
// partitions and the throttle time (Kafka's
// FetchContext.getThrottledResponse; sessions are not kept, so session id
// 0).
func EmptyFetch(req *kmsg.FetchRequest, ms int32) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.ThrottleMillis = ms
	resp.Topics = []kmsg.FetchResponseTopic{}
	return resp
}

// ResponseSize returns the size of resp's frame without its size prefix
// (response header and body; Kafka's FetchResponse.sizeOf). A spliced
// fetch answer is sized without reading its file regions: wire writes the
// frame's size prefix first, which the probe keeps before stopping it.
func ResponseSize(req *wire.Request, resp kmsg.Response) int {
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
var errProbeDone = errors.New("throttle: response size known")

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
