package broker

import (
	"slices"
	"testing"
)

// FuzzAPIThrottledReplicas: the "p:b,p:b" throttled-replicas lists read
// from ZooKeeper never panic and never mix "*" with partitions. (The
// log-end entries, the same format, are fuzzed in zkutil.)
func FuzzAPIThrottledReplicas(f *testing.F) {
	for _, s := range []string{"0:1,1:2", "*", "", ",,", "a:b", "1:-2", "99999999999:1", " 3 : 4 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, all := throttledPartitions(s, 1)
		if all && len(parts) > 0 {
			t.Fatalf("%q: both * and partitions", s)
		}
	})
}

func TestAPIThrottledPartitionsForThisBroker(t *testing.T) {
	parts, all := throttledPartitions("0:1,0:2,1:1,2:3", 1)
	if all || !slices.Equal(parts, []int32{0, 1}) {
		t.Fatalf("got %v %v", parts, all)
	}
	if _, all := throttledPartitions(" * ", 7); !all {
		t.Fatal(`"*" not recognised`)
	}
}
