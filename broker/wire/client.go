package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AppendRequest appends a complete request frame to dst: the 4-byte size, the request header
// (v0 for ControlledShutdown v0, v1, or v2 for flexible versions) and req encoded at
// req.GetVersion(). clientID nil sends a null client_id. It returns the extended slice.
func AppendRequest(dst []byte, req kmsg.Request, corr int32, clientID *string) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	hv := headerVersionOf(req)
	if hv >= 1 {
		if clientID == nil {
			dst = binary.BigEndian.AppendUint16(dst, 0xffff)
		} else {
			id := *clientID
			if len(id) > 1<<15-1 {
				id = id[:1<<15-1]
			}
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(id)))
			dst = append(dst, id...)
		}
	}
	if hv >= 2 {
		dst = append(dst, 0) // no tagged fields
	}
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// ParseResponse decodes a response frame (as returned by ReadFrame) to req: it checks that the
// correlation id equals corr (ErrCorrelation otherwise), skips the v1 header's tagged fields
// when req's version is flexible (never for ApiVersions), and decodes the body with kmsg at
// req's version into req.ResponseKind(). Byte fields of the response alias frame.
//
// An ApiVersions response that does not decode at req's version, or decodes with error
// UNSUPPORTED_VERSION, is decoded again as v0: a broker that does not support our version
// answers with a v0 body carrying UNSUPPORTED_VERSION (KIP-511), as Kafka's own client
// expects. The returned response then has version 0.
func ParseResponse(frame []byte, req kmsg.Request, corr int32) (kmsg.Response, error) {
	r := reader{src: frame, ok: true}
	got := r.int32()
	if !r.ok {
		return nil, fmt.Errorf("%w: %d-byte response frame", ErrMalformed, len(frame))
	}
	if got != corr {
		return nil, fmt.Errorf("%w: got %d, want %d", ErrCorrelation, got, corr)
	}
	if req.Key() != apiVersionsKey && req.IsFlexible() {
		r.skipTags()
		if !r.ok {
			return nil, fmt.Errorf("%w: %s response header", ErrMalformed, kmsg.NameForKey(req.Key()))
		}
	}
	resp := req.ResponseKind()
	err := resp.ReadFrom(r.src)
	if req.Key() == apiVersionsKey && req.GetVersion() > 0 && (err != nil || resp.(*kmsg.ApiVersionsResponse).ErrorCode == kerr.UnsupportedVersion.Code) {
		v0 := req.ResponseKind()
		v0.SetVersion(0)
		if v0.ReadFrom(r.src) == nil {
			return v0, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s v%d response body: %v", ErrMalformed, kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}
