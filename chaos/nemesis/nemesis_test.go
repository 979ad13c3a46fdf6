package nemesis

import (
	"strings"
	"testing"
	"time"
)

func TestLookup(t *testing.T) {
	all, err := Lookup([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(All())+len(Combos) {
		t.Fatalf("all: %d nemeses, want %d", len(all), len(All())+len(Combos))
	}
	c, err := Lookup([]string{"kill+pause"})
	if err != nil || len(c) != 1 || c[0].Name != "kill+pause" || c[0].MinHold != 10*time.Second {
		t.Fatalf("combined: %+v %v", c, err)
	}
	for _, bad := range []string{"nope", "kill+nope"} {
		if _, err := Lookup([]string{bad}); err == nil || !strings.Contains(err.Error(), "unknown") {
			t.Fatalf("%q: want unknown, got %v", bad, err)
		}
	}
	seen := map[string]bool{}
	for _, n := range All() {
		if seen[n.Name] || n.Help == "" || n.Start == nil {
			t.Fatalf("nemesis %q duplicated or without help/start", n.Name)
		}
		seen[n.Name] = true
	}
	for _, c := range Combos {
		if _, err := Lookup([]string{c}); err != nil {
			t.Fatalf("combo %s: %v", c, err)
		}
	}
}
