package tool

// java.text.SimpleDateFormat for the perf tools' --date-format (default
// "yyyy-MM-dd HH:mm:ss:SSS"), in the local time zone as the JVM uses.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JavaDateLayout is a parsed SimpleDateFormat pattern.
type JavaDateLayout []javaDateField

type javaDateField struct {
	letter  byte // 0 for a literal
	count   int
	literal string
}

// ParseJavaDate parses a SimpleDateFormat pattern. Unknown pattern letters
// fail as Java does ("Illegal pattern character 'x'").
func ParseJavaDate(pattern string) (JavaDateLayout, error) {
	var out JavaDateLayout
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			end := i + 1
			var lit strings.Builder
			for ; end < len(pattern); end++ {
				if pattern[end] == '\'' {
					if end+1 < len(pattern) && pattern[end+1] == '\'' {
						lit.WriteByte('\'')
						end++
						continue
					}
					break
				}
				lit.WriteByte(pattern[end])
			}
			if end >= len(pattern) {
				return nil, JavaException{"java.lang.IllegalArgumentException", "Unterminated quote"}
			}
			if end == i+1 {
				lit.WriteByte('\'') // '' is a quote
			}
			out = append(out, javaDateField{literal: lit.String()})
			i = end + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune("GyMdHkKhmsSEazZX", rune(c)) {
				return nil, JavaException{"java.lang.IllegalArgumentException", fmt.Sprintf("Illegal pattern character '%c'", c)}
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			out = append(out, javaDateField{letter: c, count: n})
			i += n
		default:
			out = append(out, javaDateField{literal: string(c)})
			i++
		}
	}
	return out, nil
}

// format formats t (local time) with the layout.
func (l JavaDateLayout) Format(t time.Time) string {
	t = t.Local()
	var b strings.Builder
	pad := func(v, n int) {
		s := strconv.Itoa(v)
		for len(s) < n {
			s = "0" + s
		}
		b.WriteString(s)
	}
	for _, f := range l {
		switch f.letter {
		case 0:
			b.WriteString(f.literal)
		case 'G':
			b.WriteString("AD")
		case 'y':
			if f.count == 2 {
				pad(t.Year()%100, 2)
			} else {
				pad(t.Year(), f.count)
			}
		case 'M':
			switch {
			case f.count >= 4:
				b.WriteString(t.Month().String())
			case f.count == 3:
				b.WriteString(t.Month().String()[:3])
			default:
				pad(int(t.Month()), f.count)
			}
		case 'd':
			pad(t.Day(), f.count)
		case 'H':
			pad(t.Hour(), f.count)
		case 'k':
			pad((t.Hour()+23)%24+1, f.count)
		case 'K':
			pad(t.Hour()%12, f.count)
		case 'h':
			pad((t.Hour()+11)%12+1, f.count)
		case 'm':
			pad(t.Minute(), f.count)
		case 's':
			pad(t.Second(), f.count)
		case 'S':
			pad(t.Nanosecond()/int(time.Millisecond), f.count)
		case 'E':
			if f.count >= 4 {
				b.WriteString(t.Weekday().String())
			} else {
				b.WriteString(t.Weekday().String()[:3])
			}
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'Z':
			b.WriteString(t.Format("-0700"))
		case 'X':
			if _, off := t.Zone(); off == 0 {
				b.WriteString("Z")
			} else {
				b.WriteString(t.Format("-07:00"))
			}
		}
	}
	return b.String()
}
