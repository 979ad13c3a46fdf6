package javaprops

// Writing: Escape and Format, Properties.store's escaping.

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape encodes s as Properties.store(OutputStream) does (Java's
// saveConvert with escUnicode): see the package comment. isKey selects the
// key rules (every space escaped).
func Escape(s string, isKey bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Not UTF-8: keep the byte so Load reads back what it gave.
			b.WriteByte(s[i])
			i++
			continue
		}
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
			var units [2]uint16
			n := utf16.AppendRune(units[:0], r)
			for _, u := range n {
				writeUnicodeEscape(&b, u)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func writeUnicodeEscape(b *strings.Builder, u uint16) {
	const hex = "0123456789ABCDEF"
	b.WriteString(`\u`)
	b.WriteByte(hex[u>>12&0xf])
	b.WriteByte(hex[u>>8&0xf])
	b.WriteByte(hex[u>>4&0xf])
	b.WriteByte(hex[u&0xf])
}

// Format renders props as "key=value" lines with sorted keys, escaped by
// Escape, so that Load(Format(m)) equals m for any m Load returned.
func Format(props map[string]string) []byte {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(Escape(k, true))
		b.WriteByte('=')
		b.WriteString(Escape(props[k], false))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
