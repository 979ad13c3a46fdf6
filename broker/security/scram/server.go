package scram

import (
	"crypto/hmac"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors of a SCRAM exchange. ErrMalformed and ErrAuthzid carry Kafka's own
// message for the client; the others are answered with Kafka's generic
// "invalid credentials" message, so a client cannot tell an unknown user from
// a wrong password.
var (
	ErrMalformed     = errors.New("scram: malformed message")
	ErrAuthzid       = errors.New("scram: authorization id does not match the user")
	ErrUnknownUser   = errors.New("scram: unknown user")
	ErrIterations    = errors.New("scram: credential iterations below the minimum")
	ErrNonceMismatch = errors.New("scram: client final nonce does not match the server nonce")
	ErrBadProof      = errors.New("scram: invalid client proof")
	ErrState         = errors.New("scram: exchange already finished")
)

// Lookup returns the credential of user, or ok false when it has none for the
// mechanism. It is called once per authentication.
type Lookup func(user string) (c Credential, ok bool)

// Server is one server-side SCRAM exchange: two client messages in, two
// server messages out.
type Server struct {
	mech   *Mechanism
	lookup Lookup
	step   int

	user            string
	cred            Credential
	gs2Header       string
	clientFirstBare string
	serverFirst     string
	nonce           string
}

// NewServer starts an exchange for mech that finds credentials with lookup.
func NewServer(mech *Mechanism, lookup Lookup) *Server {
	return &Server{mech: mech, lookup: lookup}
}

// User returns the authenticated user once Step has reported done.
func (s *Server) User() string { return s.user }

// Step consumes one client message and returns the server's answer; done is
// true after the server-final message. An error ends the exchange.
func (s *Server) Step(msg []byte) (resp []byte, done bool, err error) {
	switch s.step {
	case 0:
		s.step = 1
		resp, err := s.clientFirst(string(msg))
		if err != nil {
			s.step = 2
			return nil, false, err
		}
		return []byte(resp), false, nil
	case 1:
		s.step = 2
		resp, err := s.clientFinal(string(msg))
		if err != nil {
			return nil, false, err
		}
		return []byte(resp), true, nil
	}
	return nil, false, ErrState
}

// clientFirst parses "n,[a=authzid],n=user,r=nonce[,ext...]" (only the "n"
// gs2 flag: Kafka supports no channel binding) and answers server-first.
func (s *Server) clientFirst(msg string) (string, error) {
	rest, ok := strings.CutPrefix(msg, "n,")
	if !ok {
		return "", fmt.Errorf("%w: client-first must start with \"n,\"", ErrMalformed)
	}
	authzPart, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return "", fmt.Errorf("%w: client-first has no gs2 header end", ErrMalformed)
	}
	var authzid string
	if authzPart != "" {
		a, ok := strings.CutPrefix(authzPart, "a=")
		if !ok {
			return "", fmt.Errorf("%w: bad authzid field", ErrMalformed)
		}
		if authzid, ok = unescapeName(a); !ok {
			return "", fmt.Errorf("%w: bad authzid", ErrMalformed)
		}
	}
	s.gs2Header = "n," + authzPart + ","
	fields := strings.Split(bare, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "n=") || !strings.HasPrefix(fields[1], "r=") {
		return "", fmt.Errorf("%w: client-first wants n= and r=", ErrMalformed)
	}
	user, ok := unescapeName(fields[0][2:])
	cnonce := fields[1][2:]
	if !ok || user == "" || cnonce == "" || !printable(cnonce) {
		return "", fmt.Errorf("%w: bad user name or nonce", ErrMalformed)
	}
	for _, ext := range fields[2:] {
		if ext == "tokenauth=true" {
			// Delegation tokens are not supported; Kafka looks the id up
			// in its token cache instead of the users.
			return "", fmt.Errorf("%w: delegation token authentication is not supported", ErrUnknownUser)
		}
	}
	if authzid != "" && authzid != user {
		return "", ErrAuthzid
	}
	cred, found := s.lookup(user)
	if !found {
		return "", ErrUnknownUser
	}
	if cred.Iterations < MinIterations {
		return "", ErrIterations
	}
	s.user, s.cred, s.clientFirstBare = user, cred, bare
	s.nonce = cnonce + randomString()
	s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(cred.Iterations)
	return s.serverFirst, nil
}

// clientFinal checks "c=<binding>,r=<nonce>[,ext],p=<proof>" and answers
// server-final "v=<signature>".
func (s *Server) clientFinal(msg string) (string, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return "", fmt.Errorf("%w: client-final has no proof", ErrMalformed)
	}
	withoutProof := msg[:i]
	proof, err := base64.StdEncoding.DecodeString(msg[i+3:])
	if err != nil {
		return "", fmt.Errorf("%w: proof is not base64", ErrMalformed)
	}
	fields := strings.Split(withoutProof, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "c=") || !strings.HasPrefix(fields[1], "r=") {
		return "", fmt.Errorf("%w: client-final wants c= and r=", ErrMalformed)
	}
	binding, err := base64.StdEncoding.DecodeString(fields[0][2:])
	if err != nil || string(binding) != s.gs2Header {
		return "", fmt.Errorf("%w: channel binding does not match the gs2 header", ErrMalformed)
	}
	// CVE-2024-56128: the nonce must carry the one the server sent (client
	// nonce + server nonce); an unchecked nonce lets a captured exchange be
	// replayed. Kafka's fix checks that it ends with it, and so does Samsa:
	// librdkafka (kcat 1.7) sends the client nonce again in front.
	if !strings.HasSuffix(fields[1][2:], s.nonce) {
		return "", ErrNonceMismatch
	}
	if len(proof) != s.mech.keyBytes {
		return "", ErrBadProof
	}
	authMessage := []byte(s.clientFirstBare + "," + s.serverFirst + "," + withoutProof)
	clientSignature := s.mech.hmac(s.cred.StoredKey, authMessage)
	clientKey := make([]byte, len(proof))
	for j := range proof {
		clientKey[j] = proof[j] ^ clientSignature[j]
	}
	if subtle.ConstantTimeCompare(s.mech.sum(clientKey), s.cred.StoredKey) != 1 {
		return "", ErrBadProof
	}
	serverSignature := hmac.New(s.mech.hash, s.cred.ServerKey)
	serverSignature.Write(authMessage)
	return "v=" + base64.StdEncoding.EncodeToString(serverSignature.Sum(nil)), nil
}

// unescapeName undoes RFC 5802's saslname escaping ("=2C" → ",", "=3D" →
// "="); any other "=" is invalid.
func unescapeName(s string) (string, bool) {
	if !strings.Contains(s, "=") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// printable reports whether a nonce uses RFC 5802's printable characters
// (0x21-0x7e except ',').
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}
