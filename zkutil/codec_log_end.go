package zkutil

import (
	"strconv"
	"strings"
)

// Log-end reassignment entries (Samsa only). A reassignment may ask that
// its new replicas start at the leader's log end instead of copying the
// partition; the replicas it names are kept as the entity config
// /config/samsa_log_end_replicas/<topic> = {"replicas":"p:b,p:b"}, so a
// controller failover does not lose them. The value is a comma-separated
// list of partition:broker pairs, the format Kafka uses for
// *.replication.throttled.replicas.

// LogEndReplicasKey is the key of the entity config holding the entries.
const LogEndReplicasKey = "replicas"

// LogEndEntry names one replica (a broker id) of one partition that starts
// at the leader's log end.
type LogEndEntry struct {
	Partition int32
	Replica   int32
}

// DecodeLogEndEntries parses "p:b,p:b" (spaces around either number are
// allowed); malformed or negative entries are skipped, as a broker reading
// a hand-edited znode must not fail the reassignment.
func DecodeLogEndEntries(s string) []LogEndEntry {
	var out []LogEndEntry
	for _, e := range strings.Split(s, ",") {
		p, r, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok {
			continue
		}
		pn, err1 := strconv.ParseInt(p, 10, 32)
		rn, err2 := strconv.ParseInt(r, 10, 32)
		if err1 == nil && err2 == nil && pn >= 0 && rn >= 0 {
			out = append(out, LogEndEntry{Partition: int32(pn), Replica: int32(rn)})
		}
	}
	return out
}

// EncodeLogEndEntries formats entries as "p:b,p:b" (empty for none).
func EncodeLogEndEntries(entries []LogEndEntry) string {
	s := make([]string, len(entries))
	for i, e := range entries {
		s[i] = itoa(e.Partition) + ":" + itoa(e.Replica)
	}
	return strings.Join(s, ",")
}
