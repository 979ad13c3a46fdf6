package topics

import (
	"fmt"
	"io"
	"strings"

	"samsa/tools/internal/tool"
)

// topicInfo is what --describe prints about one topic, gathered by either
// backend.
type topicInfo struct {
	Name              string
	TopicID           string     // "" when the topic has no (or the zero) id
	Configs           []configKV // overrides (ZK) or non-default entries (Admin), in print order
	MinISR            int        // effective min.insync.replicas; 0 = unknown (ZK path)
	MarkedForDeletion bool       // ZK path only
	Partitions        []partInfo // sorted by ID
}

type configKV struct{ Name, Value string }

// partInfo is one partition line.
type partInfo struct {
	ID          int32
	Leader      int32 // -1 when there is no leader (or no state)
	Replicas    []int32
	ISR         []int32
	Reassigning bool // a reassignment is in progress (Admin path)
	Adding      []int32
	Removing    []int32
}

// describeOpts are Kafka 2.8's DescribeOptions.
type describeOpts struct {
	underReplicated, unavailable, underMinISR, atMinISR, withOverrides bool
	liveBrokers                                                        map[int32]bool
}

func newDescribeOpts(o *topicOpts, live map[int32]bool) describeOpts {
	return describeOpts{
		underReplicated: o.underReplicated, unavailable: o.unavailable, underMinISR: o.underMinISR,
		atMinISR: o.atMinISR, withOverrides: o.withOverrides, liveBrokers: live,
	}
}

// describeConfigs reports whether header lines are printed: not in the
// partition report modes.
func (d describeOpts) describeConfigs() bool {
	return !d.underReplicated && !d.unavailable && !d.underMinISR && !d.atMinISR
}

// replicationFactor is the replica count without adding replicas (2.6+).
func (p partInfo) replicationFactor() int {
	if p.Reassigning {
		return len(p.Replicas) - len(p.Adding)
	}
	return len(p.Replicas)
}

func (p partInfo) hasLeader() bool { return p.Leader >= 0 }

func (d describeOpts) printPartition(t topicInfo, p partInfo) bool {
	if d.describeConfigs() {
		return true
	}
	switch {
	case d.underReplicated && p.replicationFactor()-len(p.ISR) > 0:
		return true
	case d.unavailable && (!p.hasLeader() || !d.liveBrokers[p.Leader]):
		return true
	case d.underMinISR && (!p.hasLeader() || (t.MinISR > 0 && len(p.ISR) < t.MinISR)):
		return true
	case d.atMinISR && t.MinISR > 0 && len(p.ISR) == t.MinISR:
		return true
	}
	return false
}

// writeTopicDescription prints one topic in Kafka 2.8's --describe format:
//
//	Topic: t\tTopicId: id\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: k=v,k2=v2
//	\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2
func writeTopicDescription(w io.Writer, t topicInfo, d describeOpts) {
	if d.describeConfigs() && (!d.withOverrides || len(t.Configs) > 0) {
		var b strings.Builder
		b.WriteString("Topic: " + t.Name)
		if t.TopicID != "" {
			b.WriteString("\tTopicId: " + t.TopicID)
		}
		rf := 0
		if len(t.Partitions) > 0 {
			rf = t.Partitions[0].replicationFactor()
		}
		fmt.Fprintf(&b, "\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: ", len(t.Partitions), rf)
		for i, c := range t.Configs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(c.Name + "=" + c.Value)
		}
		if t.MarkedForDeletion {
			b.WriteString("\tMarkedForDeletion: true")
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
	if d.withOverrides {
		return
	}
	for _, p := range t.Partitions {
		if !d.printPartition(t, p) {
			continue
		}
		leader := "none"
		if p.hasLeader() {
			leader = fmt.Sprint(p.Leader)
		}
		line := fmt.Sprintf("\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s",
			t.Name, p.ID, leader, tool.JoinInt32(p.Replicas), tool.JoinInt32(p.ISR))
		if p.Reassigning {
			line += "\tAdding Replicas: " + tool.JoinInt32(p.Adding) + "\tRemoving Replicas: " + tool.JoinInt32(p.Removing)
		}
		if t.MarkedForDeletion && !d.describeConfigs() {
			line += "\tMarkedForDeletion: true"
		}
		io.WriteString(w, line+"\n")
	}
}
