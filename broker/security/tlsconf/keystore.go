package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("tlsconf: bad ssl configuration")

func cfgErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// loadKeyPair reads the keystore the keys name; ok is false when no keystore
// is configured.
func loadKeyPair(k map[string]string) (cert tls.Certificate, ok bool, err error) {
	typ := strings.ToUpper(k["ssl.keystore.type"])
	if typ == "" {
		typ = "JKS"
	}
	loc, inlineKey, inlineChain := k["ssl.keystore.location"], k["ssl.keystore.key"], k["ssl.keystore.certificate.chain"]
	if inlineKey != "" || inlineChain != "" {
		if typ != "PEM" {
			return cert, false, cfgErr("ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type PEM, not %s", typ)
		}
		if inlineKey == "" || inlineChain == "" {
			return cert, false, cfgErr("ssl.keystore.key and ssl.keystore.certificate.chain must be given together")
		}
		if loc != "" {
			return cert, false, cfgErr("ssl.keystore.location may not be set with an inline PEM key")
		}
		cert, err = pemKeyPair([]byte(inlineChain + "\n" + inlineKey))
		return cert, err == nil, err
	}
	if loc == "" {
		return cert, false, nil
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		return cert, false, cfgErr("ssl.keystore.location: %v", err)
	}
	storePw := k["ssl.keystore.password"]
	keyPw := k["ssl.key.password"]
	if keyPw == "" {
		keyPw = storePw
	}
	switch typ {
	case "PEM":
		cert, err = pemKeyPair(data)
	case "PKCS12":
		cert, err = pkcs12KeyPair(data, storePw)
	case "JKS":
		cert, err = jksKeyPair(data, storePw, keyPw)
	default:
		return cert, false, cfgErr("ssl.keystore.type %q is not JKS, PKCS12 or PEM", typ)
	}
	if err != nil {
		return cert, false, fmt.Errorf("%w: keystore %s (%s): %v", ErrConfig, loc, typ, err)
	}
	return cert, true, nil
}

func pemKeyPair(data []byte) (tls.Certificate, error) {
	var certs, keys [][]byte
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			certs = append(certs, b.Bytes)
		case b.Type == "ENCRYPTED PRIVATE KEY":
			return tls.Certificate{}, cfgErr("encrypted PEM private keys are not supported; give an unencrypted PKCS#8 key or use PKCS12")
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			keys = append(keys, pem.EncodeToMemory(b))
		}
	}
	if len(certs) == 0 || len(keys) != 1 {
		return tls.Certificate{}, cfgErr("a PEM keystore needs one private key and a certificate chain (found %d keys, %d certificates)", len(keys), len(certs))
	}
	var chain bytes.Buffer
	for _, c := range certs {
		pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: c})
	}
	return tls.X509KeyPair(chain.Bytes(), keys[0])
}

func pkcs12KeyPair(data []byte, password string) (tls.Certificate, error) {
	key, leaf, chain, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return tls.Certificate{}, err
	}
	c := tls.Certificate{PrivateKey: key.(crypto.PrivateKey), Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, ca := range chain {
		c.Certificate = append(c.Certificate, ca.Raw)
	}
	return c, nil
}

func jksKeyPair(data []byte, storePw, keyPw string) (tls.Certificate, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(storePw)); err != nil {
		return tls.Certificate{}, err
	}
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPw))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("key %q: %v", alias, err)
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("key %q: %v", alias, err)
		}
		c := tls.Certificate{PrivateKey: key}
		for _, cc := range e.CertificateChain {
			c.Certificate = append(c.Certificate, cc.Content)
		}
		if len(c.Certificate) == 0 {
			return tls.Certificate{}, fmt.Errorf("key %q has no certificate", alias)
		}
		c.Leaf, err = x509.ParseCertificate(c.Certificate[0])
		return c, err
	}
	return tls.Certificate{}, errors.New("no private key entry")
}

// loadTrustStore returns the configured trust anchors, or nil when none is
// configured (then the system roots apply, as the JVM's default truststore).
func loadTrustStore(k map[string]string) (*x509.CertPool, error) {
	typ := strings.ToUpper(k["ssl.truststore.type"])
	if typ == "" {
		typ = "JKS"
	}
	var certs []*x509.Certificate
	if inline := k["ssl.truststore.certificates"]; inline != "" {
		if typ != "PEM" {
			return nil, cfgErr("ssl.truststore.certificates needs ssl.truststore.type PEM")
		}
		var err error
		if certs, err = pemCerts([]byte(inline)); err != nil {
			return nil, err
		}
	} else if loc := k["ssl.truststore.location"]; loc != "" {
		data, err := os.ReadFile(loc)
		if err != nil {
			return nil, cfgErr("ssl.truststore.location: %v", err)
		}
		pw := k["ssl.truststore.password"]
		switch typ {
		case "PEM":
			certs, err = pemCerts(data)
		case "PKCS12":
			certs, err = pkcs12.DecodeTrustStore(data, pw)
		case "JKS":
			certs, err = jksCerts(data, pw)
		default:
			return nil, cfgErr("ssl.truststore.type %q is not JKS, PKCS12 or PEM", typ)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: truststore %s (%s): %v", ErrConfig, loc, typ, err)
		}
	} else {
		return nil, nil
	}
	if len(certs) == 0 {
		return nil, cfgErr("the truststore holds no certificate")
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return out, nil
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, cfgErr("truststore certificate: %v", err)
		}
		out = append(out, c)
	}
}

func jksCerts(data []byte, pw string) ([]*x509.Certificate, error) {
	ks := keystore.New()
	// A JKS truststore may be read without its password (no integrity
	// check), as Java does; keystore-go needs one, so none means "".
	if err := ks.Load(bytes.NewReader(data), []byte(pw)); err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var raw [][]byte
		if ks.IsTrustedCertificateEntry(alias) {
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, err
			}
			raw = append(raw, e.Certificate.Content)
		} else if chain, err := ks.GetPrivateKeyEntryCertificateChain(alias); err == nil {
			for _, c := range chain {
				raw = append(raw, c.Content)
			}
		}
		for _, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}
