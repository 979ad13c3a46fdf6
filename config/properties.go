package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf16"
)

// maxPropertiesBytes bounds a properties file: server.properties is a few
// kilobytes, so anything near this size is a mistake, not a configuration.
const maxPropertiesBytes = 16 << 20

// ErrMalformedEscape is wrapped by ParseProperties when a \uXXXX escape is
// not followed by four hexadecimal digits (Java throws
// IllegalArgumentException "Malformed \uxxxx encoding." in the same case).
var ErrMalformedEscape = errors.New(`config: malformed \uxxxx encoding`)

// ParseProperties parses data in the syntax of java.util.Properties.load:
//
//   - a logical line is one or more natural lines (ended by \n, \r or \r\n);
//     a natural line ending in an odd number of backslashes continues on the
//     next one, whose leading whitespace is dropped;
//   - lines whose first non-blank character is '#' or '!' are comments, and
//     comments never continue;
//   - the key runs to the first unescaped '=', ':' or whitespace; whitespace,
//     at most one '=' or ':', and whitespace again separate it from the value;
//   - escapes \t \n \r \f and \uXXXX (UTF-16, surrogate pairs combined) are
//     decoded in keys and values; a backslash before any other character
//     yields that character; a backslash at the very end of input is dropped.
//
// Unlike Java, which reads the stream as ISO-8859-1, the bytes are taken as
// UTF-8 text. A later duplicate key replaces an earlier one. The returned map
// is owned by the caller. The only error is a malformed \u escape (it names
// the line), and input never causes a panic.
func ParseProperties(data []byte) (map[string]string, error) {
	props := make(map[string]string)
	lines := logicalLines(string(data))
	for _, ln := range lines {
		key, value, err := splitKeyValue(ln.text)
		if err != nil {
			return nil, fmt.Errorf("%w on line %d", err, ln.number)
		}
		props[key] = value
	}
	return props, nil
}

// ReadPropertiesFile reads and parses a properties file (see ParseProperties).
func ReadPropertiesFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPropertiesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > maxPropertiesBytes {
		return nil, fmt.Errorf("config: %s is larger than the %d bytes allowed for a properties file", path, maxPropertiesBytes)
	}
	props, err := ParseProperties(data)
	if err != nil {
		return nil, fmt.Errorf("%w in %s", err, path)
	}
	return props, nil
}

// ParseOverrides turns command-line overrides of the form "key=value" (as
// given to kafka-server-start.sh --override) into a map. The value may
// contain '='; the key must not be empty. All bad entries are reported
// together.
func ParseOverrides(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	var errs []error
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("config: invalid override %q: expected key=value", a))
			continue
		}
		out[k] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Merge returns a new map holding base with every entry of overrides applied
// on top. Neither argument is modified.
func Merge(base, overrides map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(overrides))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range overrides {
		out[k] = v
	}
	return out
}

// FormatProperties renders props as a properties file with sorted keys,
// escaping what ParseProperties would otherwise read differently, so that
// ParseProperties(FormatProperties(m)) equals m.
func FormatProperties(props map[string]string) []byte {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(escapeProperty(k, true))
		b.WriteByte('=')
		b.WriteString(escapeProperty(props[k], false))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func escapeProperty(s string, isKey bool) string {
	var b strings.Builder
	// Byte by byte: every special character is ASCII, and invalid UTF-8 must
	// survive unchanged.
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == ' ' && (isKey || i == 0):
			b.WriteString(`\ `)
		case (c == '=' || c == ':') && isKey:
			b.WriteByte('\\')
			b.WriteByte(c)
		case (c == '#' || c == '!') && isKey && i == 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

type logicalLine struct {
	text   string // raw text with continuations joined, escapes not yet decoded
	number int    // 1-based number of the first natural line
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// logicalLines splits s into logical lines, dropping blank and comment lines
// and joining continuations (the escaping backslash is removed, the next
// line's leading whitespace too).
func logicalLines(s string) []logicalLine {
	var out []logicalLine
	var cur strings.Builder
	inLogical := false
	start := 0
	lineNo := 0
	for pos := 0; pos <= len(s); {
		end := pos
		for end < len(s) && s[end] != '\n' && s[end] != '\r' {
			end++
		}
		natural := s[pos:end]
		next := end
		if next < len(s) {
			if s[next] == '\r' && next+1 < len(s) && s[next+1] == '\n' {
				next += 2
			} else {
				next++
			}
		}
		lineNo++
		atEOF := end >= len(s)

		i := 0
		for i < len(natural) && isBlank(natural[i]) {
			i++
		}
		natural = natural[i:]
		if !inLogical {
			if natural == "" || natural[0] == '#' || natural[0] == '!' {
				if atEOF {
					break
				}
				pos = next
				continue
			}
			start = lineNo
			cur.Reset()
		}
		// An odd number of trailing backslashes escapes the line terminator.
		n := 0
		for n < len(natural) && natural[len(natural)-1-n] == '\\' {
			n++
		}
		if n%2 == 1 {
			cur.WriteString(natural[:len(natural)-1])
			inLogical = true
			if atEOF {
				out = append(out, logicalLine{text: cur.String(), number: start})
				break
			}
			pos = next
			continue
		}
		cur.WriteString(natural)
		inLogical = false
		out = append(out, logicalLine{text: cur.String(), number: start})
		if atEOF {
			break
		}
		pos = next
	}
	return out
}

// splitKeyValue splits one logical line into its decoded key and value.
func splitKeyValue(line string) (string, string, error) {
	keyEnd := len(line)
	valueStart := len(line)
	hasSep := false
	backslash := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if backslash {
			backslash = false
			continue
		}
		if c == '\\' {
			backslash = true
			continue
		}
		if c == '=' || c == ':' {
			keyEnd, valueStart, hasSep = i, i+1, true
			break
		}
		if isBlank(c) {
			keyEnd, valueStart = i, i+1
			break
		}
	}
	// Skip whitespace, then at most one separator if none was seen yet.
	for valueStart < len(line) {
		c := line[valueStart]
		if isBlank(c) {
			valueStart++
			continue
		}
		if !hasSep && (c == '=' || c == ':') {
			hasSep = true
			valueStart++
			continue
		}
		break
	}
	key, err := unescape(line[:keyEnd])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(line[valueStart:])
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

// unescape decodes Java properties escapes. A trailing lone backslash is
// dropped, as Java does.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			u, ok := hex4(s, i+1)
			if !ok {
				return "", ErrMalformedEscape
			}
			i += 4
			r := rune(u)
			if r >= 0xD800 && r < 0xDC00 && strings.HasPrefix(s[i+1:], `\u`) {
				if u2, ok := hex4(s, i+3); ok {
					if pair := utf16.DecodeRune(r, rune(u2)); pair != '\uFFFD' {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// hex4 reads four hexadecimal digits at s[at:].
func hex4(s string, at int) (uint16, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var v uint16
	for _, c := range []byte(s[at : at+4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}
