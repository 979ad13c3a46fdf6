package zkutil

import (
	"crypto/rand"
	"encoding/base64"
)

// NewTopicID returns a random KIP-516 topic id in the form /brokers/topics/<t> stores it
// (Kafka's Uuid.toString: 22 characters of URL-safe base64 without padding). It is never
// the zero id and, like Kafka 3.x's Uuid.randomUuid, never starts with '-', which
// command-line tools would take for an option.
func NewTopicID() string {
	for {
		var id [16]byte
		_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go 1.24+)
		s := base64.RawURLEncoding.EncodeToString(id[:])
		if id != ([16]byte{}) && s[0] != '-' {
			return s
		}
	}
}
