package promtext

import (
	"sort"
	"strings"
)

// label is one Prometheus label pair.
type label struct{ name, value string }

// splitName maps a registry name to a sanitised metric base name and its
// labels, sorted by label name.
func splitName(reg string) (string, []label) {
	base, ls, _ := splitNameHelp(reg)
	return base, ls
}

// splitNameHelp is splitName that also returns the MBean name without the
// label pairs, used as the family's HELP text.
func splitNameHelp(reg string) (string, []label, string) {
	domain, props, ok := strings.Cut(reg, ":")
	if !ok {
		return sanitize(reg), nil, reg
	}
	var typ, name string
	var labels []label
	for _, kv := range strings.Split(props, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		switch k {
		case "type":
			typ = v
		case "name":
			name = v
		default:
			labels = append(labels, label{name: labelName(k), value: v})
		}
	}
	parts := []string{domain}
	help := domain + ":"
	if typ != "" {
		parts = append(parts, typ)
		help += "type=" + typ
	}
	if name != "" {
		parts = append(parts, name)
		if typ != "" {
			help += ","
		}
		help += "name=" + name
	}
	sort.SliceStable(labels, func(i, j int) bool { return labels[i].name < labels[j].name })
	return sanitize(strings.Join(parts, "_")), labels, help
}

// sanitize lower-cases s and replaces every character outside [a-z0-9_]
// by '_'; a leading digit gets a '_' prefix.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 1)
	for i, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r == '_':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// labelName sanitises a label name; case is kept (Kafka's keys are
// camelCase: delayedOperation, clientId).
func labelName(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 || strings.HasPrefix(b.String(), "__") {
		return "l" + b.String()
	}
	return b.String()
}

// escapeValue escapes a label value as the text format requires.
func escapeValue(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// formatLabels renders {a="x",b="y"} ("" when there are none).
func formatLabels(ls []label) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name)
		b.WriteString(`="`)
		b.WriteString(escapeValue(l.value))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}
