package zkconsumer

import (
	"errors"
	"fmt"
	"testing"

	"samsa/kafka"
)

// parts returns partition ids 0..n-1.
func parts(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

func th(consumer string, i int) ThreadID { return ThreadID{Consumer: consumer, Thread: i} }

func tp(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}

// TestZKConsumerJavaStringHash checks String.hashCode against values
// computed by hand (h = 31*h + c, int32 overflow) and a well-known one.
func TestZKConsumerJavaStringHash(t *testing.T) {
	cases := []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"hello", 99162322},
		// '['=91 'a'=97 ','=44 '0'=48 ']'=93:
		// 91 → 2918 → 90502 → 2805610 → 86974003
		{"[a,0]", 86974003},
		{"[a,1]", 86974034},
		{"[b,0]", 87003794},
		// 2805611*31+48 = 86973989; 86973989*31+93 = 2696193752 → -1598773544
		{"[a,10]", -1598773544},
		// a character outside the BMP hashes as its two UTF-16 surrogates
		{"\U0001F600", 0xD83D*31 + 0xDE00},
	}
	for _, c := range cases {
		if got := javaStringHash(c.s); got != c.want {
			t.Errorf("hash(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

// TestZKConsumerThreadOrder checks that thread ids sort by their text, as
// ConsumerThreadId.compare does, and by UTF-16 units beyond ASCII.
func TestZKConsumerThreadOrder(t *testing.T) {
	if !threadLess(th("c", 10), th("c", 2)) {
		t.Error(`"c-10" must sort before "c-2"`)
	}
	if !threadLess(th("c", 1), th("c1", 0)) {
		t.Error(`"c-1" must sort before "c1-0" ('-' < '1')`)
	}
	// U+FF5E (UTF-16 0xFF5E) sorts after U+1F600 (0xD83D...) in Java,
	// though its UTF-8 encoding sorts before.
	if !javaStringLess("\U0001F600", "\uFF5E") {
		t.Error("Java order by UTF-16 units expected")
	}
}

func TestZKConsumerAssignRange(t *testing.T) {
	cases := []struct {
		name string
		g    GroupState
		want Assignment
	}{
		{
			// The example in Kafka's RangeAssignor comment.
			name: "kafka doc example 2x2 streams 5 partitions",
			g: GroupState{
				Members:    map[string]map[string]int{"C1": {"t": 2}, "C2": {"t": 2}},
				Partitions: map[string][]int32{"t": {4, 3, 2, 1, 0}},
			},
			want: Assignment{tp("t", 0): th("C1", 0), tp("t", 1): th("C1", 0), tp("t", 2): th("C1", 1),
				tp("t", 3): th("C2", 0), tp("t", 4): th("C2", 1)},
		},
		{
			name: "more threads than partitions",
			g: GroupState{
				Members:    map[string]map[string]int{"a": {"t": 1}, "b": {"t": 1}, "c": {"t": 1}},
				Partitions: map[string][]int32{"t": {0, 1}},
			},
			want: Assignment{tp("t", 0): th("a", 0), tp("t", 1): th("b", 0)},
		},
		{
			// Threads c-0, c-1, c-10, c-2, ..., c-9: 12 partitions over 11
			// threads, c-0 gets the extra one, c-10 comes third.
			name: "string order of thread ids",
			g: GroupState{
				Members:    map[string]map[string]int{"c": {"t": 11}},
				Partitions: map[string][]int32{"t": parts(12)},
			},
			want: Assignment{tp("t", 0): th("c", 0), tp("t", 1): th("c", 0), tp("t", 2): th("c", 1),
				tp("t", 3): th("c", 10), tp("t", 4): th("c", 2), tp("t", 5): th("c", 3), tp("t", 6): th("c", 4),
				tp("t", 7): th("c", 5), tp("t", 8): th("c", 6), tp("t", 9): th("c", 7), tp("t", 10): th("c", 8),
				tp("t", 11): th("c", 9)},
		},
		{
			// Per topic, only the subscribers of that topic share it.
			name: "different subscriptions",
			g: GroupState{
				Members:    map[string]map[string]int{"a": {"x": 1, "y": 1}, "b": {"y": 2}},
				Partitions: map[string][]int32{"x": parts(2), "y": parts(3)},
			},
			want: Assignment{tp("x", 0): th("a", 0), tp("x", 1): th("a", 0),
				tp("y", 0): th("a", 0), tp("y", 1): th("b", 0), tp("y", 2): th("b", 1)},
		},
		{
			name: "topic without partitions",
			g: GroupState{
				Members:    map[string]map[string]int{"a": {"missing": 1}},
				Partitions: map[string][]int32{},
			},
			want: Assignment{},
		},
		{
			name: "no members",
			g:    GroupState{Partitions: map[string][]int32{"t": parts(3)}},
			want: Assignment{},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AssignRange(c.g)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != c.want.String() {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestZKConsumerAssignRoundRobin(t *testing.T) {
	cases := []struct {
		name string
		g    GroupState
		want Assignment
	}{
		{
			// hash order: [a,10] (-1598773544) first, then [a,0]..[a,9]
			// (86974003 + 31*p); dealt to g_c1-0, g_c2-0 in turn.
			name: "hash order puts [a,10] first",
			g: GroupState{
				Members:    map[string]map[string]int{"g_c1": {"a": 1}, "g_c2": {"a": 1}},
				Partitions: map[string][]int32{"a": parts(11)},
			},
			want: Assignment{tp("a", 10): th("g_c1", 0), tp("a", 0): th("g_c2", 0), tp("a", 1): th("g_c1", 0),
				tp("a", 2): th("g_c2", 0), tp("a", 3): th("g_c1", 0), tp("a", 4): th("g_c2", 0), tp("a", 5): th("g_c1", 0),
				tp("a", 6): th("g_c2", 0), tp("a", 7): th("g_c1", 0), tp("a", 8): th("g_c2", 0), tp("a", 9): th("g_c1", 0)},
		},
		{
			// [a,0] 86974003 < [a,1] 86974034 < [b,0] 87003794 < [b,1] 87003825
			name: "two topics three consumers",
			g: GroupState{
				Members:    map[string]map[string]int{"c3": {"a": 1, "b": 1}, "c1": {"a": 1, "b": 1}, "c2": {"a": 1, "b": 1}},
				Partitions: map[string][]int32{"a": parts(2), "b": parts(2)},
			},
			want: Assignment{tp("a", 0): th("c1", 0), tp("a", 1): th("c2", 0), tp("b", 0): th("c3", 0), tp("b", 1): th("c1", 0)},
		},
		{
			// Threads of one consumer interleave with the other's only by
			// their text: c1-0, c1-1, c2-0, c2-1.
			name: "several streams",
			g: GroupState{
				Members:    map[string]map[string]int{"c1": {"a": 2}, "c2": {"a": 2}},
				Partitions: map[string][]int32{"a": parts(6)},
			},
			want: Assignment{tp("a", 0): th("c1", 0), tp("a", 1): th("c1", 1), tp("a", 2): th("c2", 0),
				tp("a", 3): th("c2", 1), tp("a", 4): th("c1", 0), tp("a", 5): th("c1", 1)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AssignRoundRobin(c.g)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != c.want.String() {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestZKConsumerAssignRoundRobinRejectsDifferentSubscriptions(t *testing.T) {
	for name, members := range map[string]map[string]map[string]int{
		"different topics":                {"c1": {"a": 1, "b": 1}, "c2": {"a": 1}},
		"different stream counts":         {"c1": {"a": 1, "b": 1}, "c2": {"a": 2, "b": 2}},
		"one consumer, counts per topic":  {"c1": {"a": 1, "b": 2}},
		"disjoint topics of two consumer": {"c1": {"a": 1}, "c2": {"b": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "different stream counts" {
				// Same topics and the same count on every topic for each
				// consumer: Kafka accepts this (thread sets per topic agree).
				if _, err := AssignRoundRobin(GroupState{Members: members}); err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			_, err := AssignRoundRobin(GroupState{Members: members, Partitions: map[string][]int32{"a": parts(2), "b": parts(2)}})
			if !errors.Is(err, ErrSubscriptionsDiffer) {
				t.Fatalf("err = %v, want ErrSubscriptionsDiffer", err)
			}
		})
	}
}

// TestZKConsumerAssignCoversAndAgrees checks for both strategies, over many
// group shapes, that every partition goes to exactly one subscribed thread
// and that members computing from differently ordered inputs agree.
func TestZKConsumerAssignCoversAndAgrees(t *testing.T) {
	for _, strategy := range []string{StrategyRange, StrategyRoundRobin} {
		assign, err := AssignorFor(strategy)
		if err != nil {
			t.Fatal(err)
		}
		for nc := 1; nc <= 4; nc++ {
			for ns := 1; ns <= 3; ns++ {
				for np := 0; np <= 13; np += 3 {
					members := map[string]map[string]int{}
					for c := 0; c < nc; c++ {
						members[fmt.Sprintf("g_h-%d", c)] = map[string]int{"x": ns, "y": ns}
					}
					g := GroupState{Members: members, Partitions: map[string][]int32{"x": parts(np), "y": parts(np + 1)}}
					a, err := assign(g)
					if err != nil {
						t.Fatal(err)
					}
					rev := GroupState{Members: members, Partitions: map[string][]int32{"x": reversed(parts(np)), "y": reversed(parts(np + 1))}}
					b, _ := assign(rev)
					if a.String() != b.String() {
						t.Fatalf("%s: input order changes the answer", strategy)
					}
					if len(a) != 2*np+1 {
						t.Fatalf("%s nc=%d ns=%d np=%d: %d partitions assigned, want %d", strategy, nc, ns, np, len(a), 2*np+1)
					}
					counts := map[ThreadID]int{}
					for _, th := range a {
						counts[th]++
					}
					if strategy == StrategyRoundRobin {
						lo, hi := 1<<30, 0
						for c := 0; c < nc; c++ {
							for s := 0; s < ns; s++ {
								n := counts[th(fmt.Sprintf("g_h-%d", c), s)]
								lo, hi = min(lo, n), max(hi, n)
							}
						}
						if hi-lo > 1 {
							t.Fatalf("roundrobin unbalanced: %v", counts)
						}
					}
				}
			}
		}
	}
}

func reversed(ps []int32) []int32 {
	out := make([]int32, len(ps))
	for i, p := range ps {
		out[len(ps)-1-i] = p
	}
	return out
}

func TestZKConsumerAssignBoundsStreams(t *testing.T) {
	g := GroupState{Members: map[string]map[string]int{"c": {"t": 1 << 30}}}
	if _, err := AssignRange(g); err == nil {
		t.Fatal("expected an error for 2^30 streams")
	}
	if _, err := AssignorFor("sticky"); err == nil {
		t.Fatal("expected an error for an unknown strategy")
	}
}

func TestZKConsumerNewConsumerID(t *testing.T) {
	// tested further in the registration test; here only the format.
	id, err := NewConsumerID("grp1", "", "host1", timeMs(1467000000000))
	if err != nil {
		t.Fatal(err)
	}
	var ts int64
	var hexPart string
	if n, _ := fmt.Sscanf(id, "grp1_host1-%d-%s", &ts, &hexPart); n != 2 || ts != 1467000000000 || len(hexPart) != 8 {
		t.Fatalf("id %q does not look like grp1_host1-1467000000000-xxxxxxxx", id)
	}
	if id, _ := NewConsumerID("grp1", "fixed", "host1", timeMs(0)); id != "grp1_fixed" {
		t.Fatalf("consumer.id: got %q", id)
	}
}
