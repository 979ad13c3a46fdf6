package group

import (
	"testing"
)

// Kafka's GroupState.validPreviousStates, exhaustively.
func TestGroupStateTransitions(t *testing.T) {
	all := []State{Empty, PreparingRebalance, CompletingRebalance, Stable, Dead}
	allowed := map[[2]State]bool{
		{PreparingRebalance, Empty}:               true,
		{Empty, PreparingRebalance}:               true,
		{Stable, PreparingRebalance}:              true,
		{CompletingRebalance, PreparingRebalance}: true,
		{PreparingRebalance, CompletingRebalance}: true,
		{CompletingRebalance, Stable}:             true,
	}
	for _, from := range all {
		for _, to := range all {
			want := allowed[[2]State{from, to}] || to == Dead
			if got := validTransition(from, to); got != want {
				t.Errorf("%s -> %s: got %v, want %v", from, to, got, want)
			}
		}
	}
	names := map[State]string{Empty: "Empty", PreparingRebalance: "PreparingRebalance",
		CompletingRebalance: "CompletingRebalance", Stable: "Stable", Dead: "Dead"}
	for s, n := range names {
		if s.String() != n {
			t.Errorf("%d.String() = %q", s, s.String())
		}
	}
}

func testGroup(members ...*member) *group {
	g := &group{members: map[string]*member{}, static: map[string]string{}, pending: map[string]Timer{}}
	for _, m := range members {
		g.members[m.id] = m
		g.order = append(g.order, m.id)
	}
	if len(members) > 0 {
		g.state = Stable
		g.protocolType = "consumer"
	}
	return g
}

func protos(names ...string) []Protocol {
	out := make([]Protocol, len(names))
	for i, n := range names {
		out[i] = Protocol{Name: n, Metadata: []byte(n)}
	}
	return out
}

// Kafka's GroupMetadata.selectProtocol: the candidate every member
// supports with the most first-choice votes.
func TestGroupSelectProtocol(t *testing.T) {
	cases := []struct {
		name    string
		members [][]string
		want    string
	}{
		{"single", [][]string{{"range", "roundrobin"}}, "range"},
		{"majority", [][]string{{"range", "sticky"}, {"sticky", "range"}, {"sticky", "range"}}, "sticky"},
		{"only common", [][]string{{"range", "cooperative-sticky"}, {"cooperative-sticky"}}, "cooperative-sticky"},
		{"tie goes to first member's order", [][]string{{"a", "b"}, {"b", "a"}}, "a"},
		{"unsupported first choice votes for next", [][]string{{"x", "b", "a"}, {"a", "b"}, {"b", "a"}}, "b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ms []*member
			for i, p := range c.members {
				ms = append(ms, &member{id: string(rune('a' + i)), protocols: protos(p...)})
			}
			if got := testGroup(ms...).selectProtocol(); got != c.want {
				t.Fatalf("selectProtocol = %q, want %q", got, c.want)
			}
		})
	}
}

// Kafka's GroupMetadata.supportsProtocols.
func TestGroupSupportsProtocols(t *testing.T) {
	empty := testGroup()
	if empty.supportsProtocols("", protos("range")) || empty.supportsProtocols("consumer", nil) {
		t.Fatal("empty group accepted an empty protocol type or list")
	}
	if !empty.supportsProtocols("consumer", protos("range")) {
		t.Fatal("empty group refused a valid member")
	}
	g := testGroup(&member{id: "a", protocols: protos("range", "sticky")}, &member{id: "b", protocols: protos("sticky")})
	cases := []struct {
		typ   string
		names []string
		want  bool
	}{
		{"consumer", []string{"sticky"}, true},
		{"consumer", []string{"range"}, false}, // b lacks range
		{"consumer", []string{"range", "sticky"}, true},
		{"connect", []string{"sticky"}, false},
	}
	for _, c := range cases {
		if got := g.supportsProtocols(c.typ, protos(c.names...)); got != c.want {
			t.Errorf("supportsProtocols(%s, %v) = %v, want %v", c.typ, c.names, got, c.want)
		}
	}
}

// Static members: Kafka's isStaticMemberFenced.
func TestGroupStaticMemberFenced(t *testing.T) {
	g := testGroup(&member{id: "m1", instanceID: "i1"})
	g.static["i1"] = "m1"
	cases := []struct {
		member, instance string
		want             bool
	}{
		{"m1", "i1", false},
		{"m2", "i1", true},
		{"m2", "", false},
		{"m2", "unknown", false},
	}
	for _, c := range cases {
		if got := g.isStaticMemberFenced(c.member, c.instance); got != c.want {
			t.Errorf("fenced(%s, %s) = %v", c.member, c.instance, got)
		}
	}
}

// The consumer protocol subscription header (version, topics) as Java,
// Sarama and franz-go clients write it.
func TestGroupParseSubscriptionTopics(t *testing.T) {
	topics, ok := parseSubscriptionTopics(subscription("a", "bb"))
	if !ok || len(topics) != 2 || topics[0] != "a" || topics[1] != "bb" {
		t.Fatalf("parse = %v %v", topics, ok)
	}
	for _, bad := range [][]byte{nil, {0}, {0, 1, 0x7f, 0xff, 0xff, 0xff}, {0, 0, 0, 0, 0, 1, 0, 5, 'a'}} {
		if _, ok := parseSubscriptionTopics(bad); ok {
			t.Fatalf("parsed %x", bad)
		}
	}
}

func TestGroupMemberMatches(t *testing.T) {
	m := &member{protocols: protos("range", "sticky")}
	if !m.matches(protos("range", "sticky")) || m.matches(protos("sticky", "range")) || m.matches(protos("range")) {
		t.Fatal("matches disagrees with Kafka's MemberMetadata.matches")
	}
	changed := protos("range", "sticky")
	changed[1].Metadata = []byte("other")
	if m.matches(changed) {
		t.Fatal("changed metadata matched")
	}
}
