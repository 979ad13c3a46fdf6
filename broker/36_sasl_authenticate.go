package broker

// SaslAuthenticate: v0-2
//
// Behaviour:
//   - Like SaslHandshake: the handler sees it only outside an exchange and
//     answers ILLEGAL_SASL_STATE (KafkaApis.handleSaslAuthenticateRequest);
//     broker/server runs the exchange.
//
// Version notes:
//   - v1: session_lifetime_ms (KIP-368). v2: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (b *Broker) handleSASLAuthenticate(r *request) (kmsg.Response, error) {
	resp := r.body.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	msg := "Unexpected SASL request outside an authentication exchange"
	resp.ErrorMessage = &msg
	return resp, nil
}
