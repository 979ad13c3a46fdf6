package tlsconf

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"samsa/broker/principal"
)

// javaKeywords are the attribute names Java's RFC 2253 formatting uses; any
// other attribute is written as its OID with a #hex DER value.
var javaKeywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// DN formats a certificate's subject as Java's
// X500Principal.getName(X500Principal.RFC2253).
func DN(cert *x509.Certificate) (string, error) {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(cert.RawSubject, &seq); err != nil || len(rest) > 0 {
		return "", fmt.Errorf("tlsconf: undecodable certificate subject")
	}
	var rdns []string
	for i := len(seq) - 1; i >= 0; i-- {
		var avas []string
		for _, atv := range seq[i] {
			oid := atv.Type.String()
			key, named := javaKeywords[oid]
			s, isString := atv.Value.(string)
			if named && isString {
				avas = append(avas, key+"="+escapeRFC2253(s))
				continue
			}
			der, err := asn1.Marshal(atv.Value)
			if err != nil {
				return "", fmt.Errorf("tlsconf: certificate subject attribute %s: %v", oid, err)
			}
			avas = append(avas, oid+"=#"+hex.EncodeToString(der))
		}
		rdns = append(rdns, strings.Join(avas, "+"))
	}
	return strings.Join(rdns, ","), nil
}

// escapeRFC2253 escapes as RFC 2253 §2.4: , + " \ < > ; anywhere, # at the
// start, spaces at either end.
func escapeRFC2253(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case strings.ContainsRune(`,+"\<>;`, r),
			r == '#' && i == 0,
			r == ' ' && (i == 0 || i == len(s)-1):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Mapper applies ssl.principal.mapping.rules (Kafka's SslPrincipalMapper).
type Mapper struct {
	rules []rule
}

type rule struct {
	dflt  bool
	re    *regexp.Regexp
	repl  string
	lower bool
	upper bool
}

// NewMapper parses a comma list of DEFAULT and RULE:<regex>/<replacement>/[LU]
// (an empty list is DEFAULT). Slashes inside the pattern or replacement are
// escaped as \/.
func NewMapper(rules string) (*Mapper, error) {
	m := &Mapper{}
	s := strings.TrimSpace(rules)
	if s == "" {
		s = "DEFAULT"
	}
	for s != "" {
		switch {
		case strings.HasPrefix(s, "DEFAULT"):
			m.rules = append(m.rules, rule{dflt: true})
			s = s[len("DEFAULT"):]
		case strings.HasPrefix(s, "RULE:"):
			s = s[len("RULE:"):]
			pat, rest, ok := cutUnescaped(s)
			if !ok {
				return nil, cfgErr("ssl.principal.mapping.rules: rule %q has no replacement", s)
			}
			repl, rest, ok := cutUnescaped(rest)
			if !ok {
				return nil, cfgErr("ssl.principal.mapping.rules: rule %q is not RULE:pattern/replacement/[LU]", s)
			}
			re, err := regexp.Compile("^(?:" + strings.ReplaceAll(pat, `\/`, "/") + ")$")
			if err != nil {
				return nil, cfgErr("ssl.principal.mapping.rules: %v", err)
			}
			r := rule{re: re, repl: strings.ReplaceAll(repl, `\/`, "/")}
			if strings.HasPrefix(rest, "L") {
				r.lower, rest = true, rest[1:]
			} else if strings.HasPrefix(rest, "U") {
				r.upper, rest = true, rest[1:]
			}
			m.rules = append(m.rules, r)
			s = rest
		default:
			return nil, cfgErr("ssl.principal.mapping.rules: invalid rule at %q", s)
		}
		s = strings.TrimSpace(s)
		if s != "" {
			if s[0] != ',' {
				return nil, cfgErr("ssl.principal.mapping.rules: want ',' at %q", s)
			}
			s = strings.TrimSpace(s[1:])
		}
	}
	return m, nil
}

// cutUnescaped splits s at its first '/' not preceded by '\'.
func cutUnescaped(s string) (before, after string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// Name maps a DN to a principal name: the first rule whose pattern matches
// the whole DN. No matching rule is an error (Kafka fails the handshake).
func (m *Mapper) Name(dn string) (string, error) {
	for _, r := range m.rules {
		if r.dflt {
			return dn, nil
		}
		if !r.re.MatchString(dn) {
			continue
		}
		out := r.re.ReplaceAllString(dn, r.repl)
		if r.lower {
			out = strings.ToLower(out)
		} else if r.upper {
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("tlsconf: no ssl.principal.mapping.rules rule matches %q", dn)
}

// Principal returns the principal of a connection whose peer presented
// cert: User:<mapped DN>; no certificate is User:ANONYMOUS.
func (m *Mapper) Principal(cert *x509.Certificate) (principal.Principal, error) {
	if cert == nil {
		return principal.Anonymous, nil
	}
	dn, err := DN(cert)
	if err != nil {
		return principal.Anonymous, err
	}
	name, err := m.Name(dn)
	if err != nil {
		return principal.Anonymous, err
	}
	return principal.User(name), nil
}
