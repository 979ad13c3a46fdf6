package sasl

import (
	"errors"
	"strings"
	"testing"

	"samsa/broker/security/scram"
)

const jaasFile = `
// the broker's JAAS file
KafkaServer {
   org.apache.kafka.common.security.plain.PlainLoginModule required
   username="admin"
   password="admin-secret"
   user_admin="admin-secret"
   user_alice="alice \"quoted\" secret";
   org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";
};
sasl_ssl.KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-pw"; };
Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="zk"; };
`

func TestSASLParseJAAS(t *testing.T) {
	j, err := ParseJAAS(jaasFile)
	if err != nil {
		t.Fatal(err)
	}
	m, ok, err := ServerModule("", j, "SASL_PLAINTEXT", Plain)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if u := m.PlainUsers(); len(u) != 2 || u["alice"] != `alice "quoted" secret` || u["admin"] != "admin-secret" {
		t.Fatalf("users %v", u)
	}
	m, ok, _ = ServerModule("", j, "SASL_SSL", Plain)
	if !ok || m.PlainUsers()["bob"] != "bob-pw" || len(m.PlainUsers()) != 1 {
		t.Fatalf("listener section not preferred: %v", m)
	}
	m, ok, _ = ServerModule("", j, "SASL_PLAINTEXT", ScramSHA512)
	if !ok || m.Options["username"] != "admin" {
		t.Fatalf("scram module %v", m)
	}
	if j["Client"][0].Options["password"] != "zk" {
		t.Fatalf("Client section %v", j["Client"])
	}
	m, ok, err = ServerModule(`org.apache.kafka.common.security.plain.PlainLoginModule required user_carol="c";`, j, "SASL_SSL", Plain)
	if err != nil || !ok || m.PlainUsers()["carol"] != "c" {
		t.Fatalf("listener value not preferred: %v %v", m, err)
	}
	// CVE-2025-27819: no other login module class from a dynamic config.
	if _, _, err := ServerModule(`com.sun.security.auth.module.JndiLoginModule required user.provider.url="ldap://x";`, j, "SASL_SSL", Plain); !errors.Is(err, ErrJAAS) {
		t.Fatalf("JndiLoginModule accepted: %v", err)
	}
	for _, bad := range []string{"KafkaServer {", "KafkaServer { x required a=\"b\" };", "KafkaServer { x maybe; };", `x required a="b`} {
		if _, err := ParseJAAS(bad); !errors.Is(err, ErrJAAS) {
			t.Errorf("ParseJAAS(%q) = %v", bad, err)
		}
	}
	if _, err := ParseJAASValue(`a required; b required;`); !errors.Is(err, ErrJAAS) {
		t.Errorf("two modules in one value accepted: %v", err)
	}
}

func TestSASLPlain(t *testing.T) {
	cfg := &Config{Mechanisms: []string{Plain}, PlainUsers: map[string]string{"alice": "pw"}}
	try := func(token string) (string, error) {
		s := NewSession(cfg)
		if err := s.Handshake(Plain); err != nil {
			t.Fatal(err)
		}
		_, done, err := s.Step([]byte(token))
		if err == nil && !done {
			t.Fatal("not done")
		}
		return s.User(), err
	}
	if u, err := try("\x00alice\x00pw"); err != nil || u != "alice" {
		t.Fatalf("good login: %q %v", u, err)
	}
	if u, err := try("alice\x00alice\x00pw"); err != nil || u != "alice" {
		t.Fatalf("authzid = user: %q %v", u, err)
	}
	cases := map[string]string{
		"admin\x00alice\x00pw": "different from username", // CVE-2017-12610
		"\x00alice\x00nope":    "Invalid username or password",
		"\x00bob\x00pw":        "Invalid username or password",
		"\x00\x00pw":           "username not specified",
		"\x00alice\x00":        "password not specified",
		"alice\x00pw":          "expected 3 tokens, got 2",
	}
	for tok, want := range cases {
		_, err := try(tok)
		var ae *AuthError
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, want) {
			t.Errorf("token %q: %v, want %q", tok, err, want)
		}
	}
}

func TestSASLHandshake(t *testing.T) {
	cfg := &Config{Mechanisms: []string{ScramSHA512}}
	for _, m := range []string{Plain, "GSSAPI", "OAUTHBEARER", ScramSHA256, ""} {
		if err := NewSession(cfg).Handshake(m); !errors.Is(err, ErrUnsupportedMechanism) {
			t.Errorf("Handshake(%q) = %v", m, err)
		}
	}
	s := NewSession(cfg)
	if _, _, err := s.Step([]byte("n,,n=u,r=x")); !errors.Is(err, ErrIllegalState) {
		t.Fatalf("Step before Handshake: %v", err)
	}
	if err := s.Handshake(ScramSHA512); err != nil {
		t.Fatal(err)
	}
	// No credential source: unknown user, Kafka's generic message.
	_, _, err := s.Step([]byte("n,,n=u,r=x"))
	var ae *AuthError
	if !errors.As(err, &ae) || !errors.Is(err, scram.ErrUnknownUser) ||
		ae.Message != "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512" {
		t.Fatalf("unknown user: %v", err)
	}
}

func FuzzSASLParseJAAS(f *testing.F) {
	f.Add(jaasFile)
	f.Add(`a required b="c\"";`)
	f.Fuzz(func(t *testing.T, s string) {
		ParseJAAS(s)
		ParseJAASValue(s)
	})
}

// FuzzSASLPlainToken: a PLAIN token is network input before
// authentication; it never panics and only the exact credentials pass.
func FuzzSASLPlainToken(f *testing.F) {
	f.Add([]byte("\x00alice\x00pw"))
	f.Add([]byte("admin\x00alice\x00pw"))
	f.Add([]byte("\x00\x00\x00"))
	cfg := &Config{Mechanisms: []string{Plain}, PlainUsers: map[string]string{"alice": "pw"}}
	f.Fuzz(func(t *testing.T, tok []byte) {
		s := NewSession(cfg)
		if err := s.Handshake(Plain); err != nil {
			t.Fatal(err)
		}
		_, done, err := s.Step(tok)
		if err == nil && (!done || s.User() != "alice" || (string(tok) != "\x00alice\x00pw" && string(tok) != "alice\x00alice\x00pw")) {
			t.Fatalf("token %q accepted as %q", tok, s.User())
		}
	})
}
