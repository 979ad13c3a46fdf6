package storage

// A small codec for Java's java.util.Properties text format, enough to read
// any meta.properties Kafka writes (or an operator edits) and to write ours
// byte-compatibly with Properties.store(OutputStream, comments).

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// maxPropertiesBytes bounds a meta.properties file. Real ones are ~100 bytes.
const maxPropertiesBytes = 64 << 10

// parseJavaProperties parses data as Properties.load(InputStream) does:
// ISO-8859-1 bytes; '#' and '!' comment lines; "key=value", "key:value" or
// "key value"; backslash escapes (\t \n \r \f \uXXXX, others drop the
// backslash); a line ending in an odd number of backslashes continues on the
// next line, whose leading whitespace is skipped. Later keys win, as in Java.
// It never panics; a malformed \u escape is an error.
func parseJavaProperties(data []byte) (map[string]string, error) {
	if len(data) > maxPropertiesBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxPropertiesBytes)
	}
	out := make(map[string]string)
	isWS := func(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }
	lineNo := 0
	pos := 0
	// nextNatural returns the next natural line without its terminator
	// (\n, \r or \r\n) and whether there was one.
	nextNatural := func() (string, bool) {
		if pos >= len(data) {
			return "", false
		}
		lineNo++
		start := pos
		for pos < len(data) && data[pos] != '\n' && data[pos] != '\r' {
			pos++
		}
		line := string(data[start:pos])
		if pos < len(data) {
			if data[pos] == '\r' && pos+1 < len(data) && data[pos+1] == '\n' {
				pos++
			}
			pos++
		}
		return line, true
	}
	endsContinued := func(s string) bool {
		n := 0
		for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
			n++
		}
		return n%2 == 1
	}
	for {
		line, ok := nextNatural()
		if !ok {
			break
		}
		first := lineNo
		line = strings.TrimLeft(line, " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines into one logical line.
		for endsContinued(line) {
			line = line[:len(line)-1]
			cont, ok := nextNatural()
			if !ok {
				break
			}
			line += strings.TrimLeft(cont, " \t\f")
		}
		// Split the key at the first unescaped '=', ':' or whitespace.
		i := 0
		for i < len(line) {
			c := line[i]
			if c == '\\' {
				i += 2
				continue
			}
			if c == '=' || c == ':' || isWS(c) {
				break
			}
			i++
		}
		if i > len(line) {
			i = len(line)
		}
		rawKey := line[:i]
		j := i
		for j < len(line) && isWS(line[j]) {
			j++
		}
		if j < len(line) && (line[j] == '=' || line[j] == ':') {
			j++
		}
		for j < len(line) && isWS(line[j]) {
			j++
		}
		key, err := unescapeJavaProperty(rawKey)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", first, err)
		}
		val, err := unescapeJavaProperty(line[j:])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", first, err)
		}
		out[key] = val
	}
	return out, nil
}

// unescapeJavaProperty decodes Java properties escapes in s, whose bytes are
// ISO-8859-1 characters. \uXXXX escapes are UTF-16 code units, so a
// surrogate pair written as two escapes decodes to one rune.
func unescapeJavaProperty(s string) (string, error) {
	units := make([]uint16, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			units = append(units, uint16(c))
			continue
		}
		i++
		if i >= len(s) {
			break // a lone trailing backslash is dropped, as in Java
		}
		switch c = s[i]; c {
		case 't':
			units = append(units, '\t')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 'f':
			units = append(units, '\f')
		case 'u':
			if i+5 > len(s) {
				return "", errors.New("malformed \\uxxxx encoding")
			}
			v, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", errors.New("malformed \\uxxxx encoding")
			}
			units = append(units, uint16(v))
			i += 4
		default:
			units = append(units, uint16(c))
		}
	}
	return string(utf16.Decode(units)), nil
}

// escapeJavaProperty encodes s as Properties.store(OutputStream) does
// (saveConvert with escUnicode): backslash, tab, newline, carriage return,
// form feed, '=', ':', '#' and '!' are backslash-escaped, a space is escaped
// when it is the first character or anywhere in a key, and characters
// outside 0x20..0x7e become \uXXXX (UTF-16 units, upper-case hex).
func escapeJavaProperty(s string, isKey bool) string {
	var b strings.Builder
	for i, r := range []rune(s) {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == ' ':
			if i == 0 || isKey {
				b.WriteString(`\ `)
			} else {
				b.WriteByte(' ')
			}
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '=' || r == ':' || r == '#' || r == '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
