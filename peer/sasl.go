package peer

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"samsa/broker/wire"
)

// WithSASL makes the client authenticate every (re)connection with m after
// the ApiVersions exchange: SaslHandshake v1 then SaslAuthenticate until the
// mechanism is done (KIP-152), as Kafka's inter-broker clients do on a
// SASL_PLAINTEXT or SASL_SSL listener.
func WithSASL(m sasl.Mechanism) Option { return func(o *options) { o.sasl = m } }

// authenticateLocked runs the SASL exchange on the fresh connection.
func (c *Client) authenticateLocked(ctx context.Context) error {
	m := c.opts.sasl
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = m.Name()
	frame, corr, err := c.roundTripLocked(ctx, hs, nil)
	if err != nil {
		return err
	}
	resp, err := wire.ParseResponse(frame, hs, corr)
	if err != nil {
		return fmt.Errorf("peer: SaslHandshake with %s: %w", c.addr, err)
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.SASLHandshakeResponse).ErrorCode); err != nil {
		return fmt.Errorf("peer: SaslHandshake %s with %s: %w", m.Name(), c.addr, err)
	}
	sess, msg, err := m.Authenticate(ctx, c.addr)
	if err != nil {
		return fmt.Errorf("peer: SASL %s: %w", m.Name(), err)
	}
	version := int16(1)
	if r, ok := c.mu.versions[36]; ok {
		version = min(max(version, r.min), r.max)
	}
	for step := 0; step < 8; step++ { // PLAIN takes 1 round, SCRAM 2
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SetVersion(version)
		req.SASLAuthBytes = msg
		frame, corr, err := c.roundTripLocked(ctx, req, nil)
		if err != nil {
			return err
		}
		r, err := wire.ParseResponse(frame, req, corr)
		if err != nil {
			return fmt.Errorf("peer: SaslAuthenticate with %s: %w", c.addr, err)
		}
		ar := r.(*kmsg.SASLAuthenticateResponse)
		if err := kerr.ErrorForCode(ar.ErrorCode); err != nil {
			detail := ""
			if ar.ErrorMessage != nil {
				detail = ": " + *ar.ErrorMessage
			}
			return fmt.Errorf("peer: SASL %s authentication with %s: %w%s", m.Name(), c.addr, err, detail)
		}
		done, next, err := sess.Challenge(ar.SASLAuthBytes)
		if err != nil {
			return fmt.Errorf("peer: SASL %s with %s: %w", m.Name(), c.addr, err)
		}
		if done {
			return nil
		}
		msg = next
	}
	return fmt.Errorf("peer: SASL %s with %s did not finish", m.Name(), c.addr)
}
