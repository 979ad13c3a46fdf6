package sasl

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"time"

	"samsa/broker/security/scram"
)

// Kafka 2.8 defaults.
const (
	// DefaultMaxReceiveSize is sasl.server.max.receive.size.
	DefaultMaxReceiveSize = 524288
	// DefaultFailedAuthDelay is connection.failed.authentication.delay.ms.
	DefaultFailedAuthDelay = 100 * time.Millisecond
)

// Mechanism names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// Config is one listener's SASL set-up. Immutable once built; shared by the
// listener's connections.
type Config struct {
	// Mechanisms is sasl.enabled.mechanisms for the listener, in order.
	Mechanisms []string
	// PlainUsers are the accepted PLAIN users (JAAS user_<name>), name → password.
	PlainUsers map[string]string
	// SCRAM finds a user's stored credential for a SCRAM mechanism.
	SCRAM func(mech *scram.Mechanism, user string) (scram.Credential, bool)
	// MaxReceiveSize is sasl.server.max.receive.size: the largest frame a
	// connection may send before it has authenticated.
	MaxReceiveSize int32
	// FailedAuthDelay is connection.failed.authentication.delay.ms.
	FailedAuthDelay time.Duration
	// ReauthAfter is connections.max.reauth.ms (0: sessions never expire).
	ReauthAfter time.Duration
}

// Enabled reports whether mech is one of the listener's mechanisms.
func (c *Config) Enabled(mech string) bool { return slices.Contains(c.Mechanisms, mech) }

// AuthError is a failed authentication; Message is what the client is told
// (SaslAuthenticate error_message).
type AuthError struct {
	Message string
	Err     error
}

func (e *AuthError) Error() string {
	if e.Err != nil {
		return "sasl: " + e.Message + " (" + e.Err.Error() + ")"
	}
	return "sasl: " + e.Message
}
func (e *AuthError) Unwrap() error { return e.Err }

// Errors a Session reports besides AuthError.
var (
	ErrUnsupportedMechanism = errors.New("sasl: unsupported mechanism")
	ErrIllegalState         = errors.New("sasl: illegal state")
)

// Session is one connection's authentication: Handshake picks the mechanism,
// Step consumes each client token.
type Session struct {
	cfg   *Config
	mech  string
	plain bool
	scram *scram.Server
	user  string
	done  bool
}

// NewSession starts an authentication on a connection of cfg's listener.
func NewSession(cfg *Config) *Session { return &Session{cfg: cfg} }

// Handshake selects mech (SaslHandshake). ErrUnsupportedMechanism when the
// listener does not enable it (or Samsa does not implement it).
func (s *Session) Handshake(mech string) error {
	if !s.cfg.Enabled(mech) {
		return ErrUnsupportedMechanism
	}
	switch mech {
	case Plain:
		s.plain = true
	case ScramSHA256, ScramSHA512:
		m := scram.ByName(mech)
		lookup := func(user string) (scram.Credential, bool) {
			if s.cfg.SCRAM == nil {
				return scram.Credential{}, false
			}
			return s.cfg.SCRAM(m, user)
		}
		s.scram = scram.NewServer(m, lookup)
	default:
		return ErrUnsupportedMechanism
	}
	s.mech = mech
	return nil
}

// Mechanism returns the mechanism chosen by Handshake ("" before).
func (s *Session) Mechanism() string { return s.mech }

// Step consumes one client token and returns the server's token; done is
// true once the client is authenticated (User then names it). Errors:
// *AuthError (answer SASL_AUTHENTICATION_FAILED, then close after
// FailedAuthDelay), ErrIllegalState (no handshake yet, or finished).
func (s *Session) Step(token []byte) (resp []byte, done bool, err error) {
	switch {
	case s.done || s.mech == "":
		return nil, false, ErrIllegalState
	case s.plain:
		user, err := s.plainAuth(token)
		if err != nil {
			return nil, false, err
		}
		s.user, s.done = user, true
		return nil, true, nil
	}
	resp, done, err = s.scram.Step(token)
	if err != nil {
		if errors.Is(err, scram.ErrAuthzid) {
			return nil, false, &AuthError{Message: "Authentication failed: Client requested an authorization id that is different from username", Err: err}
		}
		return nil, false, &AuthError{Message: "Authentication failed during authentication due to invalid credentials with SASL mechanism " + s.mech, Err: err}
	}
	if done {
		s.user, s.done = s.scram.User(), true
	}
	return resp, done, nil
}

// User returns the authenticated user name once Step reported done.
func (s *Session) User() string { return s.user }

// plainAuth checks "[authzid] NUL authcid NUL password" as Kafka's
// PlainSaslServer.evaluateResponse does, with its messages.
func (s *Session) plainAuth(token []byte) (string, error) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return "", &AuthError{Message: fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))}
	}
	authzid, user, password := string(parts[0]), string(parts[1]), parts[2]
	if user == "" {
		return "", &AuthError{Message: "Authentication failed: username not specified"}
	}
	if len(password) == 0 {
		return "", &AuthError{Message: "Authentication failed: password not specified"}
	}
	want, known := s.cfg.PlainUsers[user]
	// Compare even for an unknown user, so the time taken does not tell
	// which users exist (CVE-2021-38153 is about the compare itself).
	match := subtle.ConstantTimeCompare(password, []byte(want)) == 1
	if !known || !match {
		return "", &AuthError{Message: "Authentication failed: Invalid username or password"}
	}
	// CVE-2017-12610: a client may not ask to act as someone else.
	if authzid != "" && authzid != user {
		return "", &AuthError{Message: "Authentication failed: Client requested an authorization id that is different from username"}
	}
	return user, nil
}
