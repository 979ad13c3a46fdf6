package broker

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/wire"
	"samsa/kafka"
	"samsa/zkutil"
)

// Log-end reassignments (Samsa only; replica/log_end_start.go has the
// replica side). A reassignment may ask that its new replicas start at the
// leader's log end instead of copying the partition. The request says so
// with a Samsa tagged field (wire.LogEndReassignmentTag, value 0x01) on a
// partition of AlterPartitionReassignments v0 (Kafka brokers ignore
// unknown tags), or kafka-reassign-partitions --zookeeper writes the entry
// itself. The entries live in ZooKeeper as the config entity
// /config/samsa_log_end_replicas/<topic> (zkutil/codec_log_end.go) naming
// the new replicas, so a controller failover does not lose them; a new
// replica consults them only while it is out of the ISR with an empty log.
// A later reassignment of the partition without the option removes the
// partition's entries.

// wantsLogEnd reports whether the request partition carries the Samsa tag.
func wantsLogEnd(p kmsg.AlterPartitionAssignmentsRequestTopicPartition) bool {
	want := false
	p.UnknownTags.Each(func(key uint32, val []byte) {
		if key == wire.LogEndReassignmentTag && len(val) == 1 && val[0] == 1 {
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
		entries, err := b.zk.GetLogEndEntries(t.Topic)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		before := slices.Clone(entries)
		for _, p := range t.Partitions {
			entries = slices.DeleteFunc(entries, func(e zkutil.LogEndEntry) bool { return e.Partition == p.Partition })
			if p.Replicas == nil || !wantsLogEnd(p) {
				continue
			}
			var current []int32
			if ps, ok := snap.Partition(t.Topic, p.Partition); ok {
				current = ps.Replicas
			}
			for _, r := range p.Replicas {
				if !slices.Contains(current, r) {
					entries = append(entries, zkutil.LogEndEntry{Partition: p.Partition, Replica: r})
				}
			}
		}
		if slices.Equal(before, entries) {
			continue
		}
		if err := b.zk.SetLogEndEntries(t.Topic, entries); err != nil {
			return err
		}
	}
	return nil
}

// startAtLogEnd implements the replica manager's StartAtLogEnd callback.
func (b *Broker) startAtLogEnd(tp kafka.TopicPartition) bool {
	entries, err := b.zk.GetLogEndEntries(tp.Topic)
	if err != nil {
		return false
	}
	return slices.Contains(entries, zkutil.LogEndEntry{Partition: tp.Partition, Replica: b.ID()})
}
