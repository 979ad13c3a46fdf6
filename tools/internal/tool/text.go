package tool

// Small text helpers: error messages without Go package prefixes, JSON
// strings as Jackson writes them, sorted map keys and ToolsUtils' host:port
// check.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// UserMessage drops Go package prefixes ("config: ", "zkutil: ") from each
// line of an error, leaving the wording Kafka's tools would print.
func UserMessage(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		for _, p := range []string{"config: ", "zkutil: ", "controller: ", "tools: "} {
			l = strings.TrimPrefix(l, p)
		}
		if strings.HasPrefix(l, "unknown topic config name") {
			l = "U" + l[1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// JSONString encodes s as a JSON string without Go's HTML escaping
// (Jackson does not escape <, > or &).
func JSONString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// SortedKeys returns m's keys in ascending order.
func SortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// hostPortRe is Kafka's Utils.HOST_PORT_PATTERN.
var hostPortRe = regexp.MustCompile(`^.*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)$`)

// CheckHostPorts is ToolsUtils.validatePortOrDie.
func CheckHostPorts(list string) error {
	for _, hp := range strings.Split(list, ",") {
		if !hostPortRe.MatchString(hp) {
			return Error("Please provide valid host:port like host1:9091,host2:9092\n ")
		}
	}
	return nil
}
