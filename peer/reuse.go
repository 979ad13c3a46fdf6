package peer

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

// RequestInto is Request for a caller that reuses memory from call to call, as a replica
// fetcher does: the response frame is read into buf (grown when too small; nil allocates) and
// decoded by kmsg into resp, which must be of req's response type (what req.ResponseKind
// returns) and may be the previous call's, whose slices kmsg then reuses. It returns the frame,
// to pass as buf to the next call.
//
// resp's byte fields (a Fetch response's RecordBatches) alias the returned frame: the caller
// must be done with them before it passes that frame to another call. Strings are copied.
// ApiVersions and Produce with acks=0 are refused (use Request).
func (c *Client) RequestInto(ctx context.Context, req kmsg.Request, resp kmsg.Response, buf []byte) ([]byte, error) {
	if p, ok := req.(*kmsg.ProduceRequest); (ok && p.Acks == 0) || req.Key() == apiVersionsKey {
		return buf, fmt.Errorf("peer: RequestInto cannot send %s", kmsg.NameForKey(req.Key()))
	}
	if resp == nil || resp.Key() != req.Key() {
		return buf, fmt.Errorf("peer: RequestInto: response kind does not match %s", kmsg.NameForKey(req.Key()))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.prepareLocked(ctx, req, false); err != nil {
		return buf, err
	}
	frame, corr, err := c.roundTripLocked(ctx, req, buf)
	if err != nil {
		c.dropLocked()
		return buf, err
	}
	if err := decodeInto(frame, req, resp, corr); err != nil {
		c.dropLocked()
		return frame, fmt.Errorf("peer: %s from %s: %w", kmsg.NameForKey(req.Key()), c.addr, err)
	}
	return frame, nil
}

// apiVersionsKey is ApiVersions' api key, whose response header never has tagged fields.
const apiVersionsKey = 18

// decodeInto checks a response frame's correlation id against corr, skips the flexible (v1)
// header's tagged fields and decodes the body into resp with kmsg at req's version: what
// wire.ParseResponse does, without allocating the response.
func decodeInto(frame []byte, req kmsg.Request, resp kmsg.Response, corr int32) error {
	if len(frame) < 4 {
		return fmt.Errorf("%w: %d-byte response frame", wire.ErrMalformed, len(frame))
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != corr {
		return fmt.Errorf("%w: got %d, want %d", wire.ErrCorrelation, got, corr)
	}
	body := frame[4:]
	if req.IsFlexible() {
		if len(body) > 0 && body[0] == 0 {
			body = body[1:] // no tagged fields, the usual header
		} else {
			b := kbin.Reader{Src: body}
			kmsg.SkipTags(&b)
			if !b.Ok() {
				return fmt.Errorf("%w: %s response header", wire.ErrMalformed, kmsg.NameForKey(req.Key()))
			}
			body = b.Src
		}
	}
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("%w: %s v%d response body: %v", wire.ErrMalformed, kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return nil
}
