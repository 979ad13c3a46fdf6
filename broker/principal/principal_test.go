package principal

import "testing"

func TestPrincipalString(t *testing.T) {
	if got := User("alice").String(); got != "User:alice" {
		t.Fatalf("User(alice) = %q, want User:alice", got)
	}
	if !Anonymous.IsAnonymous() || User("bob").IsAnonymous() {
		t.Fatal("IsAnonymous wrong")
	}
	if Anonymous.String() != "User:ANONYMOUS" {
		t.Fatalf("Anonymous = %q", Anonymous.String())
	}
}
