package verifiable

// Shared by kafka-verifiable-producer and kafka-verifiable-consumer: an
// argparse4j-style option parser (the Java tools parse with argparse4j and
// word their usage errors its way) and a JSON line writer that prints
// events as Kafka's Jackson ObjectMapper does (fields in Kafka's order,
// Jackson's string escapes, Java's Double.toString, one event per line).

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"samsa/tools/internal/tool"
)

// argKind is the type of an argparse4j argument.
type argKind int

const (
	argString argKind = iota
	argInt            // Integer
	argLong           // Long
	argFlag           // storeTrue
)

// argSpec is one argparse4j argument.
type argSpec struct {
	name    string
	kind    argKind
	choices []string // allowed values, in Kafka's order, when not nil
}

// parsedArgs holds the values given on the command line.
type parsedArgs map[string]string

func (p parsedArgs) has(name string) bool { return p[name] != "" || p.flag(name) }

func (p parsedArgs) flag(name string) bool { _, ok := p[name+"\x00flag"]; return ok }

func (p parsedArgs) str(name, def string) string {
	if v, ok := p[name]; ok {
		return v
	}
	return def
}

// num returns an already validated number, def when absent.
func (p parsedArgs) num(name string, def int64) int64 {
	if v, ok := p[name]; ok {
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return def
}

// parseArgparse parses args as argparse4j does for specs: "--name value"
// or "--name=value", the last occurrence wins, numbers are checked for
// their Java type. required lists the required arguments; oneOf, when not
// empty, is a required mutually exclusive group.
func parseArgparse(args []string, specs []argSpec, required []string, oneOf []string) (parsedArgs, error) {
	byName := map[string]argSpec{}
	for _, s := range specs {
		byName[s.name] = s
	}
	out := parsedArgs{}
	var order []string // names in command-line order, for argparse4j's conflict message
	for i := 0; i < len(args); i++ {
		name, inline, hasInline := strings.Cut(args[i], "=")
		spec, ok := byName[name]
		if !ok || !strings.HasPrefix(name, "--") {
			return nil, tool.Errorf("unrecognized arguments: '%s'", strings.Join(args[i:], " "))
		}
		if spec.kind == argFlag {
			if hasInline {
				return nil, tool.Errorf("argument %s: ignored explicit argument '%s'", name, inline)
			}
			out[name+"\x00flag"] = ""
			continue
		}
		v := inline
		if !hasInline {
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "--") && len(args[i+1]) > 2) {
				return nil, tool.Errorf("argument %s: expected one argument", name)
			}
			i++
			v = args[i]
		}
		switch spec.kind {
		case argInt, argLong:
			bits, typ := 32, "Integer"
			if spec.kind == argLong {
				bits, typ = 64, "Long"
			}
			if _, err := strconv.ParseInt(v, 10, bits); err != nil {
				return nil, tool.Errorf("argument %s: could not convert '%s' to %s", name, v, typ)
			}
		}
		if spec.choices != nil && !containsString(spec.choices, v) {
			return nil, tool.Errorf("argument %s: invalid choice: '%s' (choose from %s)", name, v, strings.Join(spec.choices, ", "))
		}
		out[name] = v
		order = append(order, name)
	}
	var given []string
	for _, n := range order {
		if containsString(oneOf, n) && !containsString(given, n) {
			given = append(given, n)
		}
	}
	if len(oneOf) > 0 && len(given) == 0 {
		return nil, tool.Errorf("one of the arguments %s is required", strings.Join(oneOf, " "))
	}
	if len(given) > 1 {
		return nil, tool.Errorf("argument %s: not allowed with argument %s", given[1], given[0])
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			return nil, tool.Errorf("argument %s is required", r)
		}
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// jsonEvents prints one JSON object per line; its methods may be called
// from several goroutines (Kafka synchronises on System.out the same way).
type jsonEvents struct {
	mu  sync.Mutex
	out io.Writer
	now func() time.Time
}

// jsonLine builds one event object. Fields are written in the order they
// are added; every event starts with "timestamp" and "name", as Kafka's
// @JsonPropertyOrder({"timestamp", "name"}).
type jsonLine struct {
	b      strings.Builder
	fields int
}

func (e *jsonEvents) event(name string) *jsonLine {
	l := &jsonLine{}
	l.b.WriteByte('{')
	l.num("timestamp", e.now().UnixMilli())
	l.str("name", name)
	return l
}

func (e *jsonEvents) print(l *jsonLine) {
	l.b.WriteString("}\n")
	e.mu.Lock()
	defer e.mu.Unlock()
	io.WriteString(e.out, l.b.String())
}

func (l *jsonLine) key(k string) {
	if l.fields > 0 {
		l.b.WriteByte(',')
	}
	l.fields++
	l.b.WriteString(jacksonQuote(k))
	l.b.WriteByte(':')
}

func (l *jsonLine) str(k, v string) *jsonLine {
	l.key(k)
	l.b.WriteString(jacksonQuote(v))
	return l
}

// nullableStr writes null for a nil string, as Jackson does.
func (l *jsonLine) nullableStr(k string, v *string) *jsonLine {
	if v == nil {
		l.key(k)
		l.b.WriteString("null")
		return l
	}
	return l.str(k, *v)
}

func (l *jsonLine) num(k string, v int64) *jsonLine {
	l.key(k)
	l.b.WriteString(strconv.FormatInt(v, 10))
	return l
}

func (l *jsonLine) boolean(k string, v bool) *jsonLine {
	l.key(k)
	l.b.WriteString(strconv.FormatBool(v))
	return l
}

// double writes a Java double as Jackson does: Double.toString, and NaN
// or the infinities as quoted strings (QUOTE_NON_NUMERIC_NUMBERS).
func (l *jsonLine) double(k string, v float64) *jsonLine {
	l.key(k)
	switch {
	case math.IsNaN(v):
		l.b.WriteString(`"NaN"`)
	case math.IsInf(v, 1):
		l.b.WriteString(`"Infinity"`)
	case math.IsInf(v, -1):
		l.b.WriteString(`"-Infinity"`)
	default:
		l.b.WriteString(tool.JavaDouble(v))
	}
	return l
}

// array writes k: [ {…}, … ] with one object per item, filled by fill.
func (l *jsonLine) array(k string, n int, fill func(i int, obj *jsonLine)) *jsonLine {
	l.key(k)
	l.b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			l.b.WriteByte(',')
		}
		obj := &jsonLine{}
		obj.b.WriteByte('{')
		fill(i, obj)
		obj.b.WriteByte('}')
		l.b.WriteString(obj.b.String())
	}
	l.b.WriteByte(']')
	return l
}

// jacksonQuote quotes s as Jackson's JsonGenerator does: '"' and '\\'
// escaped, control characters as \b \t \n \f \r or \u00XX (upper-case
// hex), everything else (including non-ASCII) as is. Invalid UTF-8 has
// already become U+FFFD, as Java's String decoding makes it.
func jacksonQuote(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04X`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
