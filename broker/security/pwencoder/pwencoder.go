// The Encoder: Encode and Decode of Kafka's stored format, with its parameter checks.

package pwencoder

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Kafka 2.8's defaults (KafkaConfig password.encoder.*).
const (
	DefaultKeyFactory = "PBKDF2WithHmacSHA512"
	DefaultCipher     = "AES/CBC/PKCS5Padding"
	DefaultKeyLength  = 128
	DefaultIterations = 4096
)

// MaxIterations bounds the PBKDF2 work a stored string can demand.
const MaxIterations = 1 << 20

// maxSalt bounds the salt a stored string may carry (Kafka writes 256 bytes).
const maxSalt = 1024

const saltLen = 256

// Names of the stored fields (Kafka's PasswordEncoder constants).
const (
	fieldKeyFactory = "keyFactoryAlgorithm"
	fieldCipher     = "cipherAlgorithm"
	fieldKeyLength  = "keyLength"
	fieldSalt       = "salt"
	fieldIterations = "iterations"
	fieldEncrypted  = "encryptedPassword"
	fieldLength     = "passwordLength"
	fieldIV         = "iv"
	fieldTagLength  = "authenticationTagLength"
)

// ErrSecretNotConfigured is Kafka's message when a password config is
// stored without password.encoder.secret.
var ErrSecretNotConfigured = errors.New("Password encoder secret not configured")

// Encoder encrypts passwords with one secret and algorithm set.
type Encoder struct {
	secret     string
	keyFactory string
	cipher     string
	keyLength  int
	iterations int
}

// New returns an Encoder for password.encoder.secret and the other
// password.encoder.* keys; an empty keyFactory means Kafka's default.
func New(secret, keyFactory, cipherAlg string, keyLength, iterations int) (*Encoder, error) {
	if secret == "" {
		return nil, ErrSecretNotConfigured
	}
	if keyFactory == "" {
		keyFactory = DefaultKeyFactory
	}
	if cipherAlg == "" {
		cipherAlg = DefaultCipher
	}
	e := &Encoder{secret: secret, keyFactory: keyFactory, cipher: cipherAlg, keyLength: keyLength, iterations: iterations}
	if err := checkParams(keyFactory, cipherAlg, keyLength, iterations); err != nil {
		return nil, err
	}
	return e, nil
}

func checkParams(keyFactory, cipherAlg string, keyLength, iterations int) error {
	if hashFor(keyFactory) == nil {
		return fmt.Errorf("unsupported password.encoder.keyfactory.algorithm %q", keyFactory)
	}
	if cipherAlg != "AES/CBC/PKCS5Padding" && cipherAlg != "AES/GCM/NoPadding" {
		return fmt.Errorf("unsupported password.encoder.cipher.algorithm %q", cipherAlg)
	}
	if keyLength != 128 && keyLength != 192 && keyLength != 256 {
		return fmt.Errorf("unsupported password.encoder.key.length %d (AES needs 128, 192 or 256)", keyLength)
	}
	if iterations < 1 || iterations > MaxIterations {
		return fmt.Errorf("password.encoder.iterations %d out of range [1, %d]", iterations, MaxIterations)
	}
	return nil
}

func hashFor(keyFactory string) func() hash.Hash {
	switch keyFactory {
	case "PBKDF2WithHmacSHA512":
		return sha512.New
	case "PBKDF2WithHmacSHA256":
		return sha256.New
	case "PBKDF2WithHmacSHA1":
		return sha1.New
	}
	return nil
}

// Encode encrypts password with a fresh random salt and IV.
func (e *Encoder) Encode(password string) (string, error) {
	salt := make([]byte, saltLen)
	iv := make([]byte, ivLen(e.cipher))
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	if _, err := rand.Read(iv); err != nil {
		return "", err
	}
	return e.encode(password, salt, iv)
}

func ivLen(cipherAlg string) int {
	if cipherAlg == "AES/GCM/NoPadding" {
		return 12
	}
	return aes.BlockSize
}

// encode is Encode with a given salt and IV (tests pin them).
func (e *Encoder) encode(password string, salt, iv []byte) (string, error) {
	key, err := e.key(e.keyFactory, e.keyLength, salt, e.iterations)
	if err != nil {
		return "", err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	var ct []byte
	fields := []string{}
	if e.cipher == "AES/GCM/NoPadding" {
		g, err := cipher.NewGCM(block)
		if err != nil {
			return "", err
		}
		ct = g.Seal(nil, iv, []byte(password), nil)
		fields = append(fields, fieldTagLength+":128")
	} else {
		pt := pad([]byte(password))
		ct = make([]byte, len(pt))
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, pt)
	}
	b64 := base64.StdEncoding.EncodeToString
	fields = append(fields,
		fieldKeyFactory+":"+e.keyFactory,
		fieldCipher+":"+e.cipher,
		fieldKeyLength+":"+strconv.Itoa(e.keyLength),
		fieldSalt+":"+b64(salt),
		fieldIterations+":"+strconv.Itoa(e.iterations),
		fieldEncrypted+":"+b64(ct),
		fieldLength+":"+strconv.Itoa(javaLength(password)),
		fieldIV+":"+b64(iv))
	return strings.Join(fields, ","), nil
}

func (e *Encoder) key(keyFactory string, keyLength int, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(hashFor(keyFactory), e.secret, salt, iterations, keyLength/8)
}

// Decode decrypts a stored string. The algorithms, key length and
// iterations come from the string itself, as in Kafka; only the secret is
// the Encoder's.
func (e *Encoder) Decode(stored string) (string, error) {
	p := parseCSVMap(stored)
	need := func(k string) (string, error) {
		v, ok := p[k]
		if !ok {
			return "", fmt.Errorf("encoded password has no %s", k)
		}
		return v, nil
	}
	var vals [8]string
	for i, k := range []string{fieldKeyFactory, fieldCipher, fieldKeyLength, fieldSalt, fieldIterations, fieldEncrypted, fieldLength, fieldIV} {
		v, err := need(k)
		if err != nil {
			return "", err
		}
		vals[i] = v
	}
	keyFactory, cipherAlg := vals[0], vals[1]
	keyLength, err1 := strconv.Atoi(vals[2])
	iterations, err2 := strconv.Atoi(vals[4])
	wantLen, err3 := strconv.Atoi(vals[6])
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", fmt.Errorf("encoded password: %w", err)
	}
	if err := checkParams(keyFactory, cipherAlg, keyLength, iterations); err != nil {
		return "", fmt.Errorf("encoded password: %w", err)
	}
	b64 := base64.StdEncoding.DecodeString
	salt, err1 := b64(vals[3])
	ct, err2 := b64(vals[5])
	iv, err3 := b64(vals[7])
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", fmt.Errorf("encoded password: %w", err)
	}
	if len(salt) > maxSalt {
		return "", fmt.Errorf("encoded password: salt of %d bytes", len(salt))
	}
	if len(iv) != ivLen(cipherAlg) {
		return "", fmt.Errorf("encoded password: iv of %d bytes", len(iv))
	}
	key, err := e.key(keyFactory, keyLength, salt, iterations)
	if err != nil {
		return "", err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	var pt []byte
	if cipherAlg == "AES/GCM/NoPadding" {
		if tl := p[fieldTagLength]; tl != "128" {
			return "", fmt.Errorf("encoded password: unsupported authenticationTagLength %q", tl)
		}
		g, err := cipher.NewGCM(block)
		if err != nil {
			return "", err
		}
		if pt, err = g.Open(nil, iv, ct, nil); err != nil {
			return "", errors.New("Invalid password")
		}
	} else {
		if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
			return "", errors.New("Invalid password")
		}
		pt = make([]byte, len(ct))
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(pt, ct)
		if pt, err = unpad(pt); err != nil {
			return "", err
		}
	}
	pw := string(pt)
	if javaLength(pw) != wantLen {
		return "", errors.New("Password could not be decoded")
	}
	return pw, nil
}

// parseCSVMap is Kafka's CoreUtils.parseCsvMap: pairs split on commas
// (with surrounding spaces), each on its last colon, trimmed.
func parseCSVMap(s string) map[string]string {
	m := map[string]string{}
	if s == "" {
		return m
	}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		i := strings.LastIndex(kv, ":")
		if i < 0 {
			continue // Kafka would throw; the missing field is reported instead
		}
		m[strings.TrimSpace(kv[:i])] = strings.TrimSpace(kv[i+1:])
	}
	return m
}

// javaLength is Java's String.length of s: its UTF-16 code units.
func javaLength(s string) int {
	return len(utf16.Encode([]rune(s)))
}

func pad(b []byte) []byte {
	n := aes.BlockSize - len(b)%aes.BlockSize
	return append(append([]byte(nil), b...), bytes.Repeat([]byte{byte(n)}, n)...)
}

func unpad(b []byte) ([]byte, error) {
	n := int(b[len(b)-1])
	if n == 0 || n > aes.BlockSize || n > len(b) {
		return nil, errors.New("Invalid password")
	}
	for _, c := range b[len(b)-n:] {
		if int(c) != n {
			return nil, errors.New("Invalid password")
		}
	}
	return b[:len(b)-n], nil
}
