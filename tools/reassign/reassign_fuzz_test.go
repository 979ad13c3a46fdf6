package reassign

import "testing"

// FuzzToolReassignJSON: the JSON files of kafka-reassign-partitions and
// kafka-leader-election never panic, and what parses formats back.
func FuzzToolReassignJSON(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}`,
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}`,
		`{"version":2,"partitions":[]}`,
		`{"topics":[{"topic":"a"},{"topic":"a"}],"version":1}`,
		`{"partitions":[{"topic":"t","partition":99999999999}]}`,
		`[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if parts, _, err := parseReassignmentJSON(data); err == nil {
			if len(parts) == 0 {
				t.Fatal("parsed an empty reassignment")
			}
			again, _, err := parseReassignmentJSON([]byte(formatReassignmentJSON(parts)))
			if err != nil || len(again) != len(parts) {
				t.Fatalf("round trip: %v (%d vs %d)", err, len(again), len(parts))
			}
		}
		_, _ = parseTopicsToMoveJSON(data)
		_, _ = parseBrokerList(string(data))
	})
}
