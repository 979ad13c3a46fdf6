package javaprops

// Reading: Load (UTF-8) and LoadLatin1 (ISO-8859-1) over one Properties.load parser.

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrMalformedEscape is wrapped by the *SyntaxError Load returns when a
// \uXXXX escape is not followed by four hexadecimal digits.
var ErrMalformedEscape = errors.New(`malformed \uxxxx encoding`)

// SyntaxError is a malformed logical line.
type SyntaxError struct {
	Line int   // 1-based number of the logical line's first natural line
	Err  error // ErrMalformedEscape
}

func (e *SyntaxError) Error() string {
	return e.Err.Error() + " on line " + strconv.Itoa(e.Line)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Load parses data, UTF-8 text, as Properties.load(Reader) does (see the
// package comment). The returned map is owned by the caller.
func Load(data []byte) (map[string]string, error) {
	return load(string(data))
}

// LoadLatin1 parses data as Properties.load(InputStream) does: each byte
// is one ISO-8859-1 character. The keys and values returned are UTF-8.
func LoadLatin1(data []byte) (map[string]string, error) {
	ascii := true
	for _, c := range data {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return load(string(data))
	}
	var b strings.Builder
	b.Grow(2 * len(data))
	for _, c := range data {
		b.WriteRune(rune(c))
	}
	return load(b.String())
}

func load(s string) (map[string]string, error) {
	props := make(map[string]string)
	for _, ln := range logicalLines(s) {
		key, value, err := splitKeyValue(ln.text)
		if err != nil {
			return nil, &SyntaxError{Line: ln.number, Err: err}
		}
		props[key] = value
	}
	return props, nil
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
	// Skip blanks, then at most one separator if none was seen yet.
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
// dropped, as Java does. An unpaired surrogate becomes U+FFFD.
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
					if pair := utf16.DecodeRune(r, rune(u2)); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r) // a lone surrogate is written as U+FFFD
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
