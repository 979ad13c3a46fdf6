// Package record owns Kafka's on-the-wire and on-disk record formats:
// record batch v2 (magic 2) and the legacy message sets v0/v1.
//
// See the full layout description below (filled in as the package grows).
package record
