package zkutil

import (
	"net/url"
	"strings"
)

// Sanitize is Kafka's Sanitizer.sanitize, the encoding of user principals and client ids as
// /config/users and /config/clients znode names (and as quota metric tags): java.net.URLEncoder
// (UTF-8, a space as "+", "*" kept, "~" encoded) with "+" then written as "%20" and "*" as
// "%2A". Go's url.QueryEscape already encodes "*" and keeps "~", so only "+" and "~" differ.
func Sanitize(name string) string {
	return strings.NewReplacer("+", "%20", "~", "%7E").Replace(url.QueryEscape(name))
}

// Desanitize is Kafka's Sanitizer.desanitize (URL decoding). A name that is not valid
// percent-encoding is returned unchanged, so a znode written by hand still names something.
func Desanitize(name string) string {
	if d, err := url.PathUnescape(name); err == nil {
		return d
	}
	return name
}
