package controller

import (
	"encoding/base64"
	"testing"
)

// TestControllerNewTopicID: ids are 16 random bytes, never zero, and their 22-character
// base64 form never starts with '-'.
func TestControllerNewTopicID(t *testing.T) {
	seen := map[[16]byte]bool{}
	for range 1000 {
		id := newTopicID()
		s := base64.RawURLEncoding.EncodeToString(id[:])
		if len(s) != 22 || s[0] == '-' || seen[id] || decodeTopicID(s) != id {
			t.Fatalf("bad id %q", s)
		}
		seen[id] = true
	}
}
