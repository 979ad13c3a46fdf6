package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// CA is a self-signed certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Leaf is an issued certificate with its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	CA   *CA
}

var serial = time.Now().UnixNano()

func nextSerial() *big.Int { serial++; return big.NewInt(serial) }

// NewCA makes a CA named cn.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &CA{Cert: c, Key: key}
}

// Server issues a certificate for 127.0.0.1, ::1 and localhost (plus dns).
func (ca *CA) Server(t testing.TB, cn string, dns ...string) *Leaf {
	return ca.issue(t, pkix.Name{CommonName: cn}, append([]string{"localhost"}, dns...),
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")})
}

// Client issues a client certificate with subject name.
func (ca *CA) Client(t testing.TB, name pkix.Name) *Leaf { return ca.issue(t, name, nil, nil) }

func (ca *CA) issue(t testing.TB, name pkix.Name, dns []string, ips []net.IP) *Leaf {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: name, DNSNames: dns, IPAddresses: ips,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &Leaf{Cert: c, Key: key, CA: ca}
}

// CertPEM is the CA certificate in PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// Pool returns a pool holding the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// KeyPEM is the leaf's PKCS#8 key in PEM.
func (l *Leaf) KeyPEM() []byte {
	der, _ := x509.MarshalPKCS8PrivateKey(l.Key)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// ChainPEM is the leaf then the CA in PEM.
func (l *Leaf) ChainPEM() []byte {
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.Cert.Raw}), l.CA.CertPEM()...)
}

// TLS returns the leaf as a tls.Certificate.
func (l *Leaf) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{l.Cert.Raw, l.CA.Cert.Raw}, PrivateKey: l.Key, Leaf: l.Cert}
}

// WritePEM writes key and chain into one file in dir and returns its path.
func (l *Leaf) WritePEM(t testing.TB, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, append(l.KeyPEM(), l.ChainPEM()...), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteCAPEM writes the CA certificate to dir/name.
func (ca *CA) WriteCAPEM(t testing.TB, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// WritePKCS12 writes the leaf as a PKCS12 keystore with password.
func (l *Leaf) WritePKCS12(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(l.Key, l.Cert, []*x509.Certificate{l.CA.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteJKS converts the leaf's PKCS12 keystore to JKS with keytool (skipping
// the test when keytool is missing) and returns the JKS path.
func (l *Leaf) WriteJKS(t testing.TB, dir, name, password string) string {
	t.Helper()
	kt, err := exec.LookPath("keytool")
	if err != nil {
		t.Skip("keytool not installed")
	}
	src := l.WritePKCS12(t, dir, name+".p12", password)
	dst := filepath.Join(dir, name)
	out, err := exec.Command(kt, "-importkeystore", "-noprompt", "-srckeystore", src, "-srcstoretype", "PKCS12",
		"-srcstorepass", password, "-destkeystore", dst, "-deststoretype", "JKS", "-deststorepass", password).CombinedOutput()
	if err != nil {
		t.Fatalf("keytool: %v\n%s", err, out)
	}
	return dst
}

// WriteTrustJKS writes a JKS truststore holding the CA, with keytool.
func (ca *CA) WriteTrustJKS(t testing.TB, dir, name, password string) string {
	t.Helper()
	kt, err := exec.LookPath("keytool")
	if err != nil {
		t.Skip("keytool not installed")
	}
	pemPath := ca.WriteCAPEM(t, dir, name+".pem")
	dst := filepath.Join(dir, name)
	out, err := exec.Command(kt, "-importcert", "-noprompt", "-alias", "ca", "-file", pemPath, "-keystore", dst,
		"-storetype", "JKS", "-storepass", password).CombinedOutput()
	if err != nil {
		t.Fatalf("keytool: %v\n%s", err, out)
	}
	return dst
}

// WriteTrustPKCS12 writes a PKCS12 truststore holding the CA.
func (ca *CA) WriteTrustPKCS12(t testing.TB, dir, name, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
