package wire

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AppendResponse appends a complete response frame for req to dst and returns the extended
// slice: the 4-byte size, the response header (v0: correlation id; v1: correlation id and an
// empty tagged-field section, for flexible versions except ApiVersions) and resp's body.
//
// The body is encoded at req.Version: AppendResponse calls resp.SetVersion(req.Version), so a
// handler cannot answer at the wrong version by accident. The one exception is ApiVersions,
// whose body is encoded at resp's own version, because an ApiVersions request above our range
// is answered with a v0 body (KIP-511; see UnsupportedAPIVersionsResponse). resp must be the
// response kind of req's key; the caller checks resp.Key() == req.Key.
func AppendResponse(dst []byte, req *Request, resp kmsg.Response) []byte {
	start := len(dst)
	dst = AppendResponseHeader(dst, &req.Header)
	if req.Key != apiVersionsKey {
		resp.SetVersion(req.Version)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// AppendResponseHeader appends a 4-byte size placeholder (zero) and the response header for h.
// A caller that writes the body itself patches the size afterwards, or uses PutFrameSize.
func AppendResponseHeader(dst []byte, h *Header) []byte {
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, h.Correlation)
	if h.ResponseHeaderVersion() == 1 {
		dst = append(dst, 0) // no tagged fields
	}
	return dst
}

// PutFrameSize writes size into the 4-byte prefix at frame[0:4]. size excludes the prefix.
func PutFrameSize(frame []byte, size int) {
	binary.BigEndian.PutUint32(frame, uint32(size))
}

// UnsupportedAPIVersionsResponse returns the answer Kafka gives to an ApiVersions request whose
// version it does not support (KIP-511): a v0 body with error UNSUPPORTED_VERSION that lists
// only ApiVersions' own supported range, so the client retries with a version in it.
func UnsupportedAPIVersionsResponse(minVersion, maxVersion int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	k := kmsg.NewApiVersionsResponseApiKey()
	k.ApiKey = apiVersionsKey
	k.MinVersion = minVersion
	k.MaxVersion = maxVersion
	resp.ApiKeys = append(resp.ApiKeys, k)
	return resp
}
