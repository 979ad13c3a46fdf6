package server

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/principal"
	"samsa/broker/security/sasl"
	"samsa/broker/wire"
)

// Api keys the SASL layer answers itself before a connection has
// authenticated (Kafka's SaslServerAuthenticator); after authentication
// they reach the Handler, which answers ILLEGAL_SASL_STATE as KafkaApis does.
const (
	apiVersionsKey      = 18
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

// saslState is a SASL listener's connection's authentication; owned by the
// reader goroutine.
type saslState struct {
	authenticated bool
	reauth        bool          // a re-authentication (KIP-368) is under way
	raw           bool          // after SaslHandshake v0: tokens travel as bare size-prefixed frames
	sess          *sasl.Session // the exchange under way, nil between exchanges
	mech          string        // the mechanism of the first authentication
	expiry        time.Time     // zero: the session never expires
}

// saslRequired reports whether the next frame belongs to the SASL exchange
// rather than to the Handler.
func (c *Conn) saslPending() bool {
	return c.sec.SASL != nil && (!c.sasl.authenticated || c.sasl.reauth)
}

// maxFrame is the largest frame the connection accepts next:
// sasl.server.max.receive.size until it has authenticated (CVE-2022-34917:
// an unauthenticated peer cannot make the broker allocate 100 MiB), then
// socket.request.max.bytes.
func (c *Conn) maxFrame() int32 {
	if c.saslPending() {
		return min(c.srv.opts.MaxRequestSize, c.sec.SASL.MaxReceiveSize)
	}
	return c.srv.opts.MaxRequestSize
}

// saslRaw handles one bare token frame after SaslHandshake v0; false closes.
func (c *Conn) saslRaw(frame []byte) bool {
	resp, done, err := c.sasl.sess.Step(frame)
	if err != nil {
		// v0 has no way to carry an error: Kafka closes the connection,
		// after the failed-authentication delay.
		c.log.WithError(err).Info("closing connection: SASL authentication failed")
		c.failDelay()
		return false
	}
	out := make([]byte, 4+len(resp))
	binary.BigEndian.PutUint32(out, uint32(len(resp)))
	copy(out[4:], resp)
	if d := c.srv.opts.IdleTimeout; d > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(d))
	}
	if _, err := c.nc.Write(out); err != nil {
		return false
	}
	if done {
		c.sasl.raw = false
		return c.authenticated()
	}
	return true
}

// saslRequest answers a request read before the connection has
// authenticated (or during re-authentication); false closes the connection.
// handled false hands the request (ApiVersions) to the Handler.
func (c *Conn) saslRequest(req *wire.Request, wbuf *[]byte) (handled, ok bool) {
	switch body := req.Body.(type) {
	case *kmsg.ApiVersionsRequest:
		if c.sasl.sess == nil && !c.sasl.reauth {
			return false, true
		}
	case *kmsg.SASLHandshakeRequest:
		if c.sasl.sess != nil && c.sasl.sess.Mechanism() != "" {
			break // a second handshake
		}
		resp := body.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = append([]string(nil), c.sec.SASL.Mechanisms...)
		sess := sasl.NewSession(c.sec.SASL)
		err := sess.Handshake(body.Mechanism)
		if err == nil && c.sasl.reauth && (body.Mechanism != c.sasl.mech || req.Version < 1) {
			err = sasl.ErrUnsupportedMechanism // re-authentication keeps the mechanism, KIP-368
		}
		if err != nil {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
			c.writeResponse(req, resp, wbuf)
			c.logRequest(req).WithField("mechanism", body.Mechanism).Info("closing connection: unsupported SASL mechanism")
			return true, false
		}
		c.sasl.sess = sess
		c.sasl.raw = req.Version == 0
		return true, c.writeResponse(req, resp, wbuf) == nil
	case *kmsg.SASLAuthenticateRequest:
		if c.sasl.sess == nil || c.sasl.raw {
			break
		}
		return true, c.saslAuthenticate(req, body, wbuf)
	}
	// Anything else before authentication: Kafka's IllegalSaslStateException,
	// the connection closes without a response.
	c.logRequest(req).Info("closing connection: request before SASL authentication")
	return true, false
}

func (c *Conn) saslAuthenticate(req *wire.Request, body *kmsg.SASLAuthenticateRequest, wbuf *[]byte) bool {
	resp := body.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	token, done, err := c.sasl.sess.Step(body.SASLAuthBytes)
	if err == nil && done && c.sasl.reauth && principal.User(c.sasl.sess.User()) != c.Principal() {
		err = &sasl.AuthError{Message: "Cannot change principals during re-authentication from " + c.Principal().String() + ": " + principal.User(c.sasl.sess.User()).String()}
	}
	if err != nil {
		var ae *sasl.AuthError
		if errors.As(err, &ae) {
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			resp.ErrorMessage = &ae.Message
		} else {
			resp.ErrorCode = kerr.IllegalSaslState.Code
		}
		c.logRequest(req).WithError(err).Info("closing connection: SASL authentication failed")
		c.failDelay()
		c.writeResponse(req, resp, wbuf)
		return false
	}
	resp.SASLAuthBytes = token
	if done {
		if d := c.sec.SASL.ReauthAfter; d > 0 {
			resp.SessionLifetimeMillis = d.Milliseconds()
		}
		if !c.authenticated() {
			return false
		}
	}
	return c.writeResponse(req, resp, wbuf) == nil
}

// authenticated ends a successful exchange: the principal is set, a session
// lifetime starts (connections.max.reauth.ms).
func (c *Conn) authenticated() bool {
	user := c.sasl.sess.User()
	if !c.sasl.reauth {
		c.sasl.mech = c.sasl.sess.Mechanism()
		c.SetPrincipal(principal.User(user))
	}
	c.sasl.authenticated, c.sasl.reauth, c.sasl.sess = true, false, nil
	if d := c.sec.SASL.ReauthAfter; d > 0 {
		c.sasl.expiry = time.Now().Add(d)
	}
	c.log.WithField("principal", c.Principal().String()).Debug("SASL authentication succeeded")
	return true
}

// saslAfterAuth checks a request on an authenticated SASL connection: after
// the session lifetime only a re-authenticating SaslHandshake is allowed
// (Kafka's SocketServer closes otherwise); a SaslHandshake with
// re-authentication enabled starts one. handled true means the SASL layer
// answered it.
func (c *Conn) saslAfterAuth(req *wire.Request, wbuf *[]byte) (handled, ok bool) {
	if req.Key == saslHandshakeKey && c.sec.SASL.ReauthAfter > 0 {
		if !c.waitDrained() {
			return true, false
		}
		c.sasl.reauth = true
		return c.saslRequest(req, wbuf)
	}
	if !c.sasl.expiry.IsZero() && time.Now().After(c.sasl.expiry) {
		c.logRequest(req).Info("closing connection: SASL session expired (connections.max.reauth.ms)")
		c.plane.expiredKilled.Add(1)
		return true, false
	}
	return false, true
}

// failDelay waits connection.failed.authentication.delay.ms before a failed
// authentication is answered and closed, slowing password guessing.
func (c *Conn) failDelay() {
	d := c.sec.SASL.FailedAuthDelay
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
}
