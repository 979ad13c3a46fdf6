package sasl

import (
	"errors"
	"fmt"
	"strings"
)

// Login module classes Kafka's docs configure; the only ones accepted.
const (
	PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// ErrJAAS is wrapped by every JAAS parsing error.
var ErrJAAS = errors.New("sasl: bad JAAS configuration")

// LoginModule is one "<class> <flag> k=v ...;" entry.
type LoginModule struct {
	Class   string
	Flag    string // required, requisite, sufficient, optional
	Options map[string]string
}

// JAAS is a parsed JAAS file: entries by section name ("KafkaServer",
// "sasl_ssl.KafkaServer", "Client").
type JAAS map[string][]LoginModule

// ParseJAAS parses a java.security.auth.login.config file.
func ParseJAAS(text string) (JAAS, error) {
	p := &jaasParser{s: text}
	out := JAAS{}
	for {
		p.skipSpace()
		if p.eof() {
			return out, nil
		}
		name := p.word()
		if name == "" {
			return nil, p.errorf("want a section name")
		}
		p.skipSpace()
		if !p.take('{') {
			return nil, p.errorf("want '{' after %s", name)
		}
		var mods []LoginModule
		for {
			p.skipSpace()
			if p.take('}') {
				break
			}
			m, err := p.module()
			if err != nil {
				return nil, err
			}
			mods = append(mods, m)
		}
		p.skipSpace()
		if !p.take(';') {
			return nil, p.errorf("want ';' after the %s section", name)
		}
		out[name] = mods
	}
}

// ParseJAASValue parses a sasl.jaas.config value: exactly one login module
// (Kafka's JaasConfig refuses more).
func ParseJAASValue(value string) (LoginModule, error) {
	p := &jaasParser{s: value}
	p.skipSpace()
	m, err := p.module()
	if err != nil {
		return LoginModule{}, err
	}
	p.skipSpace()
	if !p.eof() {
		return LoginModule{}, p.errorf("sasl.jaas.config must hold exactly one login module")
	}
	return m, nil
}

type jaasParser struct {
	s   string
	pos int
}

func (p *jaasParser) eof() bool { return p.pos >= len(p.s) }

func (p *jaasParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrJAAS, fmt.Sprintf(format, args...), p.pos)
}

// skipSpace skips white space and // and /* */ comments.
func (p *jaasParser) skipSpace() {
	for !p.eof() {
		switch {
		case strings.ContainsRune(" \t\r\n", rune(p.s[p.pos])):
			p.pos++
		case strings.HasPrefix(p.s[p.pos:], "//"):
			for !p.eof() && p.s[p.pos] != '\n' {
				p.pos++
			}
		case strings.HasPrefix(p.s[p.pos:], "/*"):
			end := strings.Index(p.s[p.pos+2:], "*/")
			if end < 0 {
				p.pos = len(p.s)
				return
			}
			p.pos += end + 4
		default:
			return
		}
	}
}

func (p *jaasParser) take(c byte) bool {
	if !p.eof() && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// word reads a name: letters, digits and . _ - $.
func (p *jaasParser) word() string {
	start := p.pos
	for !p.eof() {
		c := p.s[p.pos]
		if c == '.' || c == '_' || c == '-' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			p.pos++
			continue
		}
		break
	}
	return p.s[start:p.pos]
}

// module reads "<class> <flag> (k=v)* ;".
func (p *jaasParser) module() (LoginModule, error) {
	m := LoginModule{Class: p.word(), Options: map[string]string{}}
	if m.Class == "" {
		return m, p.errorf("want a login module class")
	}
	p.skipSpace()
	m.Flag = strings.ToLower(p.word())
	switch m.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return m, p.errorf("login module %s: want a control flag, got %q", m.Class, m.Flag)
	}
	for {
		p.skipSpace()
		if p.take(';') {
			return m, nil
		}
		key := p.word()
		if key == "" {
			return m, p.errorf("want an option name or ';'")
		}
		p.skipSpace()
		if !p.take('=') {
			return m, p.errorf("option %s: want '='", key)
		}
		p.skipSpace()
		val, err := p.value()
		if err != nil {
			return m, err
		}
		m.Options[key] = val
	}
}

// value reads a quoted string (with \ escapes) or a bare word.
func (p *jaasParser) value() (string, error) {
	if !p.take('"') {
		w := p.word()
		if w == "" {
			return "", p.errorf("want a value")
		}
		return w, nil
	}
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.pos]
		p.pos++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if p.eof() {
				return "", p.errorf("unterminated escape")
			}
			b.WriteByte(p.s[p.pos])
			p.pos++
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("unterminated string")
}

// ServerModule picks the login module for mechanism mech on listener (Kafka's
// precedence, see the package doc): the listener-and-mechanism value
// (listener.name.<l>.<mech>.sasl.jaas.config, "" if unset), else the file's
// "<listener>.KafkaServer" section, else "KafkaServer". The chosen module
// must be PLAIN's for PLAIN and SCRAM's for SCRAM-*; ok is false when none is
// configured.
func ServerModule(value string, file JAAS, listener, mech string) (m LoginModule, ok bool, err error) {
	want := PlainLoginModule
	if strings.HasPrefix(mech, "SCRAM-") {
		want = ScramLoginModule
	}
	if value != "" {
		m, err := ParseJAASValue(value)
		if err != nil {
			return m, false, err
		}
		if m.Class != want {
			return m, false, fmt.Errorf("%w: %s needs %s, not %s", ErrJAAS, mech, want, m.Class)
		}
		return m, true, nil
	}
	for _, section := range []string{strings.ToLower(listener) + ".KafkaServer", "KafkaServer"} {
		mods, found := file[section]
		if !found {
			continue
		}
		for _, mod := range mods {
			if mod.Class == want {
				return mod, true, nil
			}
		}
		return LoginModule{}, false, nil // Kafka takes the first section found, whole
	}
	return LoginModule{}, false, nil
}

// PlainUsers returns the user_<name>="password" options of a PLAIN module.
func (m LoginModule) PlainUsers() map[string]string {
	users := map[string]string{}
	for k, v := range m.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok {
			users[name] = v
		}
	}
	return users
}
