package zkconsumer

import (
	"testing"

	"samsa/zkutil"
)

// FuzzZKConsumerRegistration feeds arbitrary /consumers/<g>/ids/<id> data
// through everything a rebalance does with another member's registration:
// decode, read the subscription (static or wildcard regex), resolve it
// against a topic list and run both assignors.
//
// Invariants: never panics; a decoded registration either yields an error
// or a group state on which both assignors either fail with an error or
// assign each partition to a thread of the member.
func FuzzZKConsumerRegistration(f *testing.F) {
	f.Add([]byte(`{"version":1,"subscription":{"topicA":2,"topicB":1},"pattern":"static","timestamp":"1467000000000"}`))
	f.Add([]byte(`{"version":1,"subscription":{"logs-.*|metrics":3},"pattern":"white_list","timestamp":"1467000000000"}`))
	f.Add([]byte(`{"version":1,"subscription":{"__.*":1},"pattern":"black_list","timestamp":1467000000000}`))
	f.Add([]byte(`{"version":1,"subscription":{"t":2147483647},"pattern":"static"}`))
	f.Add([]byte(`{"version":1,"subscription":{"(":1},"pattern":"white_list"}`))
	f.Add([]byte(`{"version":1,"subscription":{"t":-3},"pattern":"static"}`))
	topics := []string{"topicA", "topicB", "logs-1", "metrics", "__consumer_offsets"}
	partitions := map[string][]int32{"topicA": {0, 1, 2}, "topicB": {0}, "logs-1": {0, 1}, "metrics": {0, 1, 2, 3}, "__consumer_offsets": {0}}
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := zkutil.DecodeConsumerRegistration(data)
		if err != nil {
			return
		}
		sub, err := subscriptionOf(reg)
		if err != nil {
			return
		}
		resolved, err := sub.resolve(topics, true)
		if err != nil {
			return
		}
		g := GroupState{Members: map[string]map[string]int{"m": resolved}, Partitions: partitions}
		for _, assign := range []Assignor{AssignRange, AssignRoundRobin} {
			a, err := assign(g)
			if err != nil {
				continue
			}
			for tp, th := range a {
				if th.Consumer != "m" || th.Thread < 0 || th.Thread >= resolved[tp.Topic] {
					t.Fatalf("%s assigned to %s", tp, th)
				}
			}
		}
	})
}
