package group

import "testing"

// Expected values computed with Java's String.hashCode semantics
// (UTF-16 code units, int32 wrap-around) and Kafka's Utils.abs.
func TestGroupPartitionFor(t *testing.T) {
	cases := []struct {
		id   string
		hash int32
		part int32
	}{
		{"", 0, 0},
		{"a", 97, 47},
		{"hello", 99162322, 22},
		{"my-group", -1906497762, 12},
		{"console-consumer-12345", 158455506, 6},
		{"grüße", 98768023, 23},
		{"😀group", -1231696132, 32},         // a surrogate pair counts as two units
		{"polygenelubricants", -1 << 31, 0}, // Utils.abs(Integer.MIN_VALUE) == 0
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			if got := javaStringHashCode(c.id); got != c.hash {
				t.Fatalf("hash = %d, want %d", got, c.hash)
			}
			if got := PartitionFor(c.id, 50); got != c.part {
				t.Fatalf("partition = %d, want %d", got, c.part)
			}
		})
	}
}
