package broker

// SaslHandshake: v0-1
//
// Behaviour:
//   - Reaches the handler only on a connection that needs no SASL exchange:
//     a listener without SASL, or a SASL listener's connection that has
//     already authenticated (without connections.max.reauth.ms). Answered
//     ILLEGAL_SASL_STATE, as Kafka's KafkaApis.handleSaslHandshakeRequest.
//     The exchange itself (before authentication, and re-authentication)
//     is broker/server's (sasl.go), as Kafka's SaslServerAuthenticator.
//
// Version notes:
//   - v0: tokens follow as raw size-prefixed frames. v1: in SaslAuthenticate (KIP-152).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleSASLHandshake(r *request) (kmsg.Response, error) {
	resp := r.body.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	return resp, nil
}
