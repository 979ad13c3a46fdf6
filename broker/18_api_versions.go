package broker

// ApiVersions: v0-3
//
// Behaviour:
//   - The answer lists every row of apis.go, including the inter-broker
//     APIs, with Kafka 2.8's ranges (never kmsg's wider ones).
//   - A version above ours is answered, not dropped: UNSUPPORTED_VERSION
//     with a v0 body that lists ApiVersions' own range (KIP-511), so clients
//     such as librdkafka retry with v0..v3.
//   - A Samsa broker asking (peer's client_software_name "samsa",
//     v3) also sees the inter-broker-only versions of apis.go (brokerMax:
//     AddPartitionsToTxn v4, KIP-890 part 1's verify-only check); clients
//     see Kafka 2.8's ranges.
//   - ThrottleMillis is always 0; there are no quotas.
//   - No finalized features (v3 tagged fields) are sent.
//
// Version notes:
//   - v1: ThrottleMillis.
//   - v3: flexible; client software name and version (KIP-511). Each
//     must match [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (Kafka 2.8
//     ApiVersionsRequest.isValid); otherwise the answer is INVALID_REQUEST
//     at v3 with no api keys (ApiVersionsRequest.getErrorResponse lists
//     ApiVersions' range only for UNSUPPORTED_VERSION), and the connection
//     stays open. Valid names are otherwise ignored. The response header
//     stays v0 (wire handles that).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
)

func (b *Broker) handleApiVersions(r *request) (kmsg.Response, error) {
	row := b.apis[r.hdr.Key]
	if r.hdr.Version > row.max {
		return wire.UnsupportedAPIVersionsResponse(row.min, row.max), nil
	}
	req := r.body.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && !(validSoftwareID(req.ClientSoftwareName) && validSoftwareID(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	for _, k := range sortedAPIKeys(b.apis) {
		a := b.apis[k]
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MinVersion, ak.MaxVersion = a.key, a.min, a.max
		if req.ClientSoftwareName == peerSoftwareName && a.brokerMax > a.max {
			ak.MaxVersion = a.brokerMax
		}
		resp.ApiKeys = append(resp.ApiKeys, ak)
	}
	return resp, nil
}

// peerSoftwareName is the client_software_name peer sends in
// ApiVersions: the mark of another Samsa broker.
const peerSoftwareName = "samsa"

// validSoftwareID reports whether s matches KIP-511's
// [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? in full: ASCII letters and
// digits, with '-' and '.' allowed only inside.
func validSoftwareID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '-' || c == '.') && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}
