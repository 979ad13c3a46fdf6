package wire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsKey is ApiVersions' api key. Its response header is always v0 (KIP-511), and an
// ApiVersions request above the supported range is still answered.
const apiVersionsKey = 18

// controlledShutdownKey is ControlledShutdown's api key; its v0 uses request header v0, the only
// request without a client_id.
const controlledShutdownKey = 7

// Header is a parsed request header (Kafka RequestHeader v0, v1 or v2).
type Header struct {
	Key         int16 // api_key
	Version     int16 // api_version
	Correlation int32 // correlation_id, echoed in the response header
	// ClientID is the client_id; nil when the client sent null (length -1) or the header is v0.
	ClientID *string
	// HeaderVersion is 0 (ControlledShutdown v0 only), 1 (no tagged fields) or 2 (flexible
	// request versions, KIP-482).
	HeaderVersion int8
}

// Request is one decoded request frame. Byte fields of Body (for example Produce's records)
// alias Frame: whoever holds the Request owns Frame and must not reuse its buffer while Body
// is in use.
type Request struct {
	Header
	// Body is the decoded request, with Body.GetVersion() == Version. It is nil when the key is
	// unknown or the version unsupported, except for ApiVersions (see ErrUnsupportedVersion).
	Body kmsg.Request
	// Frame is the frame the request was parsed from (without the size prefix).
	Frame []byte
}

// ClientIDString returns the client id, or "" when it is null or absent.
func (h *Header) ClientIDString() string {
	if h.ClientID == nil {
		return ""
	}
	return *h.ClientID
}

// APIName returns Kafka's name for the api key ("Produce", "Metadata", ...), or
// "Unknown(<key>)" for keys kmsg does not know.
func (h *Header) APIName() string {
	if kmsg.RequestForKey(h.Key) == nil {
		return fmt.Sprintf("Unknown(%d)", h.Key)
	}
	return kmsg.NameForKey(h.Key)
}

// ResponseHeaderVersion returns the response header version for this request: 1 (correlation
// id and tagged fields) for flexible versions, 0 otherwise, and always 0 for ApiVersions
// (KIP-511: a client must be able to read the response before it knows our versions).
func (h *Header) ResponseHeaderVersion() int8 {
	if h.Key == apiVersionsKey || h.HeaderVersion < 2 {
		return 0
	}
	return 1
}

// RequestHeaderVersion returns the request header version Kafka uses for key at version: 2
// for flexible versions, 0 for ControlledShutdown v0, 1 otherwise. ok is false when kmsg does
// not know the key or the version is out of its range.
func RequestHeaderVersion(key, version int16) (hv int8, ok bool) {
	body := kmsg.RequestForKey(key)
	if body == nil || version < 0 || version > body.MaxVersion() {
		return 0, false
	}
	body.SetVersion(version)
	return headerVersionOf(body), true
}

func headerVersionOf(body kmsg.Request) int8 {
	switch {
	case body.Key() == controlledShutdownKey && body.GetVersion() == 0:
		return 0
	case body.IsFlexible():
		return 2
	default:
		return 1
	}
}

// ParseRequest decodes a request frame (as returned by ReadFrame): the header, then the body
// with kmsg at the header's version. It never panics and allocates at most a small constant
// factor of len(frame): kmsg bounds every array count by the remaining bytes times the
// element's minimum wire size (KAFKA-14063), and wire bounds header strings and tagged fields
// the same way.
//
// Errors (test with errors.Is):
//   - ErrMalformed with a nil Request when the frame is shorter than the 8-byte fixed header;
//   - ErrUnknownAPIKey with the fixed header (and client id, when readable) filled in;
//   - ErrUnsupportedVersion with the header filled in; for ApiVersions above kmsg's range (not
//     for a negative version), Body is also set to an empty *kmsg.ApiVersionsRequest at the
//     requested version, so the caller can answer
//     UNSUPPORTED_VERSION with a v0 body (KIP-511; see UnsupportedAPIVersionsResponse);
//   - ErrMalformed with the header filled in when the rest of the header or the body does not
//     decode.
//
// frame is retained by the returned Request (see Request).
func ParseRequest(frame []byte) (*Request, error) {
	r := kbin.Reader{Src: frame}
	req := &Request{Frame: frame}
	req.Key = r.Int16()
	req.Version = r.Int16()
	req.Correlation = r.Int32()
	if !r.Ok() {
		return nil, fmt.Errorf("%w: %d-byte frame is shorter than a request header", ErrMalformed, len(frame))
	}
	body := kmsg.RequestForKey(req.Key)
	if body == nil {
		req.HeaderVersion = 1
		req.ClientID, _ = readClientID(&r) // best effort, for the log line
		return req, fmt.Errorf("%w %d", ErrUnknownAPIKey, req.Key)
	}
	if req.Version < 0 || req.Version > body.MaxVersion() {
		req.HeaderVersion = 1
		req.ClientID, _ = readClientID(&r)
		if req.Key == apiVersionsKey && req.Version > 0 { // KIP-511 covers versions above ours only
			body.SetVersion(req.Version)
			req.Body = body
		}
		return req, fmt.Errorf("%w: %s v%d (max v%d)", ErrUnsupportedVersion, kmsg.NameForKey(req.Key), req.Version, body.MaxVersion())
	}
	body.SetVersion(req.Version)
	req.HeaderVersion = headerVersionOf(body)
	ok := true
	if req.HeaderVersion >= 1 {
		req.ClientID, ok = readClientID(&r)
	}
	if ok && req.HeaderVersion >= 2 {
		ok = skipTags(&r)
	}
	if !ok {
		return req, fmt.Errorf("%w: %s v%d request header", ErrMalformed, kmsg.NameForKey(req.Key), req.Version)
	}
	if err := body.ReadFrom(r.Src); err != nil {
		return req, fmt.Errorf("%w: %s v%d body: %v", ErrMalformed, kmsg.NameForKey(req.Key), req.Version, err)
	}
	req.Body = body
	return req, nil
}
