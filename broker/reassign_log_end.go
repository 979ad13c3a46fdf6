package broker

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/kafka"
	"samsa/zkutil"
)

// Log-end reassignments (Samsa only; replica/log_end_start.go has the
// replica side). A reassignment may ask that its new replicas start at the
// leader's log end instead of copying the partition. The request says so
// with a Samsa tagged field (LogEndReassignmentTag, value 0x01) on a
// partition of AlterPartitionReassignments v0 (Kafka brokers ignore
// unknown tags), or kafka-reassign-partitions --zookeeper writes the entry
// itself. The entries live in ZooKeeper as the config entity
// /config/samsa_log_end_replicas/<topic> = {"replicas":"p:b,p:b"} naming
// the new replicas, so a controller failover does not lose them; a new
// replica consults them only while it is out of the ISR with an empty log.
// A later reassignment of the partition without the option removes the
// partition's entries.

// LogEndReassignmentTag is the tag of the Samsa field "start new replicas
// at the leader's log end" in AlterPartitionReassignments partitions.
const LogEndReassignmentTag = 0x5341

// LogEndReplicasEntity is the /config entity type holding log-end
// reassignment entries.
const LogEndReplicasEntity = "samsa_log_end_replicas"

// logEndReplicasKey is the key of the entity's config.
const logEndReplicasKey = "replicas"

// wantsLogEnd reports whether the request partition carries the Samsa tag.
func wantsLogEnd(p kmsg.AlterPartitionAssignmentsRequestTopicPartition) bool {
	want := false
	p.UnknownTags.Each(func(key uint32, val []byte) {
		if key == LogEndReassignmentTag && len(val) == 1 && val[0] == 1 {
			want = true
		}
	})
	return want
}

// recordLogEndReassignments updates the log-end entries of the request's
// topics before the controller starts the reassignments: partitions with
// the tag name their new replicas, the others lose their entries.
func (b *Broker) recordLogEndReassignments(req *kmsg.AlterPartitionAssignmentsRequest) error {
	snap := b.meta.Snapshot()
	for _, t := range req.Topics {
		cfg, err := b.zk.GetEntityConfig(LogEndReplicasEntity, t.Topic)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		entries := parseReplicaEntries(cfg[logEndReplicasKey])
		before := slices.Clone(entries)
		for _, p := range t.Partitions {
			entries = slices.DeleteFunc(entries, func(e [2]int32) bool { return e[0] == p.Partition })
			if p.Replicas == nil || !wantsLogEnd(p) {
				continue
			}
			var current []int32
			if ps, ok := snap.Partition(t.Topic, p.Partition); ok {
				current = ps.Replicas
			}
			for _, r := range p.Replicas {
				if !slices.Contains(current, r) {
					entries = append(entries, [2]int32{p.Partition, r})
				}
			}
		}
		if slices.Equal(before, entries) {
			continue
		}
		if err := b.zk.SetEntityConfig(LogEndReplicasEntity, t.Topic, map[string]string{logEndReplicasKey: formatReplicaEntries(entries)}); err != nil {
			return err
		}
	}
	return nil
}

// startAtLogEnd implements the replica manager's StartAtLogEnd callback.
func (b *Broker) startAtLogEnd(tp kafka.TopicPartition) bool {
	cfg, err := b.zk.GetEntityConfig(LogEndReplicasEntity, tp.Topic)
	if err != nil {
		return false
	}
	return slices.Contains(parseReplicaEntries(cfg[logEndReplicasKey]), [2]int32{tp.Partition, b.ID()})
}

// parseReplicaEntries parses "p:b,p:b"; malformed entries are skipped.
func parseReplicaEntries(s string) [][2]int32 {
	var out [][2]int32
	for _, e := range strings.Split(s, ",") {
		p, r, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok {
			continue
		}
		pn, err1 := strconv.ParseInt(p, 10, 32)
		rn, err2 := strconv.ParseInt(r, 10, 32)
		if err1 == nil && err2 == nil && pn >= 0 && rn >= 0 {
			out = append(out, [2]int32{int32(pn), int32(rn)})
		}
	}
	return out
}

func formatReplicaEntries(entries [][2]int32) string {
	s := make([]string, len(entries))
	for i, e := range entries {
		s[i] = strconv.Itoa(int(e[0])) + ":" + strconv.Itoa(int(e[1]))
	}
	return strings.Join(s, ",")
}
