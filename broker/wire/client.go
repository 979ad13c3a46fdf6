package wire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AppendRequest appends a complete request frame to dst: the 4-byte size, the request header
// (v0 for ControlledShutdown v0, v1, or v2 for flexible versions) and req encoded at
// req.GetVersion(). clientID nil sends a null client_id. It returns the extended slice.
func AppendRequest(dst []byte, req kmsg.Request, corr int32, clientID *string) []byte {
	// Not kmsg.RequestFormatter: in kmsg v1.15 it writes a ControlledShutdown v0 request as a
	// bare header with no body and a zero size, and it does not cap the client id at Kafka's
	// INT16 length. The primitives are kbin's.
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt16(dst, req.Key())
	dst = kbin.AppendInt16(dst, req.GetVersion())
	dst = kbin.AppendInt32(dst, corr)
	hv := headerVersionOf(req)
	if hv >= 1 {
		if clientID != nil && len(*clientID) > maxClientIDLen {
			id := (*clientID)[:maxClientIDLen]
			clientID = &id
		}
		dst = kbin.AppendNullableString(dst, clientID)
	}
	if hv >= 2 {
		dst = append(dst, 0) // no tagged fields
	}
	dst = req.AppendTo(dst)
	PutFrameSize(dst[start:], len(dst)-start-4)
	return dst
}

// maxClientIDLen is the longest client_id an INT16 length can carry.
const maxClientIDLen = 1<<15 - 1

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
	r := kbin.Reader{Src: frame}
	got := r.Int32()
	if !r.Ok() {
		return nil, fmt.Errorf("%w: %d-byte response frame", ErrMalformed, len(frame))
	}
	if got != corr {
		return nil, fmt.Errorf("%w: got %d, want %d", ErrCorrelation, got, corr)
	}
	if req.Key() != apiVersionsKey && req.IsFlexible() {
		if !skipTags(&r) {
			return nil, fmt.Errorf("%w: %s response header", ErrMalformed, kmsg.NameForKey(req.Key()))
		}
	}
	resp := req.ResponseKind()
	err := resp.ReadFrom(r.Src)
	if req.Key() == apiVersionsKey && req.GetVersion() > 0 && (err != nil || resp.(*kmsg.ApiVersionsResponse).ErrorCode == kerr.UnsupportedVersion.Code) {
		v0 := req.ResponseKind()
		v0.SetVersion(0)
		if v0.ReadFrom(r.Src) == nil {
			return v0, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s v%d response body: %v", ErrMalformed, kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}
