package scram

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"strconv"
	"strings"
)

// Iteration bounds: Kafka's ScramMechanism minIterations (4096) and the
// maximum AlterUserScramCredentials accepts (16384).
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// Mechanism is SCRAM-SHA-256 or SCRAM-SHA-512.
type Mechanism struct {
	name     string
	hash     func() hash.Hash
	keyBytes int
	// Type is the mechanism's id in KIP-554 requests (1 SHA-256, 2 SHA-512).
	Type int8
}

// The two mechanisms Kafka 2.8 supports.
var (
	SHA256 = &Mechanism{name: "SCRAM-SHA-256", hash: sha256.New, keyBytes: sha256.Size, Type: 1}
	SHA512 = &Mechanism{name: "SCRAM-SHA-512", hash: sha512.New, keyBytes: sha512.Size, Type: 2}
)

// Name returns the SASL mechanism name ("SCRAM-SHA-256"), also the key under
// which /config/users/<user> stores the credential.
func (m *Mechanism) Name() string { return m.name }

// ByName returns the mechanism called name, or nil.
func ByName(name string) *Mechanism {
	switch name {
	case SHA256.name:
		return SHA256
	case SHA512.name:
		return SHA512
	}
	return nil
}

// ByType returns the mechanism with the KIP-554 id t, or nil.
func ByType(t int8) *Mechanism {
	switch t {
	case SHA256.Type:
		return SHA256
	case SHA512.Type:
		return SHA512
	}
	return nil
}

// Credential is what a broker stores for one user and mechanism: never the
// password, only the salt and the two keys derived from it.
type Credential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int
}

// ErrBadCredential is wrapped by ParseCredential's errors.
var ErrBadCredential = errors.New("scram: malformed credential")

// ParseCredential parses Kafka's credential string
// "salt=..,stored_key=..,server_key=..,iterations=..". All four keys are
// required, nothing else is allowed (ScramCredentialUtils.credentialFromString).
func ParseCredential(s string) (Credential, error) {
	var c Credential
	seen := 0
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return c, fmt.Errorf("%w: %q is not key=value", ErrBadCredential, part)
		}
		var err error
		switch k {
		case "salt":
			c.Salt, err = base64.StdEncoding.DecodeString(v)
		case "stored_key":
			c.StoredKey, err = base64.StdEncoding.DecodeString(v)
		case "server_key":
			c.ServerKey, err = base64.StdEncoding.DecodeString(v)
		case "iterations":
			c.Iterations, err = strconv.Atoi(v)
		default:
			return c, fmt.Errorf("%w: unknown key %q", ErrBadCredential, k)
		}
		if err != nil {
			return c, fmt.Errorf("%w: %s: %v", ErrBadCredential, k, err)
		}
		seen++
	}
	if seen != 4 || c.Salt == nil || c.StoredKey == nil || c.ServerKey == nil || c.Iterations == 0 {
		return c, fmt.Errorf("%w: want salt, stored_key, server_key and iterations", ErrBadCredential)
	}
	return c, nil
}

// String formats c as Kafka stores it in ZooKeeper.
func (c Credential) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return "salt=" + b64(c.Salt) + ",stored_key=" + b64(c.StoredKey) + ",server_key=" + b64(c.ServerKey) +
		",iterations=" + strconv.Itoa(c.Iterations)
}

// SaltedPassword is PBKDF2-HMAC-H(password, salt, iterations), Hi() of RFC 5802.
func (m *Mechanism) SaltedPassword(password string, salt []byte, iterations int) []byte {
	k, err := pbkdf2.Key(m.hash, password, salt, iterations, m.keyBytes)
	if err != nil { // only for a key length FIPS mode forbids; ours are the hash size
		panic("scram: invariant broken: pbkdf2 refused the hash-sized key: " + err.Error())
	}
	return k
}

// CredentialFromSalted derives the stored credential from a salted password
// (what AlterUserScramCredentials carries, KIP-554).
func (m *Mechanism) CredentialFromSalted(salted, salt []byte, iterations int) Credential {
	clientKey := m.hmac(salted, []byte("Client Key"))
	return Credential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  m.sum(clientKey),
		ServerKey:  m.hmac(salted, []byte("Server Key")),
		Iterations: iterations,
	}
}

// NewCredential derives a credential for password with a fresh random salt,
// as kafka-configs.sh does (ScramFormatter.generateCredential).
func (m *Mechanism) NewCredential(password string, iterations int) Credential {
	salt := []byte(randomString())
	return m.CredentialFromSalted(m.SaltedPassword(password, salt, iterations), salt, iterations)
}

func (m *Mechanism) hmac(key, msg []byte) []byte {
	h := hmac.New(m.hash, key)
	h.Write(msg)
	return h.Sum(nil)
}

func (m *Mechanism) sum(b []byte) []byte {
	h := m.hash()
	h.Write(b)
	return h.Sum(nil)
}

// randomString is Kafka's ScramFormatter.secureRandomString: 130 random bits
// in base 36, used for server nonces and salts.
func randomString() string {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 130))
	if err != nil {
		panic("scram: invariant broken: crypto/rand failed: " + err.Error())
	}
	return n.Text(36)
}
