package controller

import (
	"slices"

	"samsa/kafka"
)

// NoLeader is the leader id of a partition without a leader (Kafka's LeaderAndIsr.NoLeader).
const NoLeader int32 = -1

// LeaderDuringDelete is the leader id sent in UpdateMetadata for partitions of topics queued
// for deletion (Kafka's LeaderAndIsr.LeaderDuringDelete). It is never written to ZooKeeper.
const LeaderDuringDelete int32 = -2

// PartitionReplica names one replica of a partition (Kafka's PartitionAndReplica).
type PartitionReplica struct {
	kafka.TopicPartition
	Replica int32
}

// String prints every field (the embedded TopicPartition's String would
// print only the partition).
func (r PartitionReplica) String() string { return kafka.FieldsString(r) }

// LeaderAndIsr is the content of a partition's state znode plus its zkVersion
// (Kafka's LeaderIsrAndControllerEpoch). Isr is owned by the value; copy before mutating.
type LeaderAndIsr struct {
	Leader          int32
	LeaderEpoch     int32
	Isr             []int32
	ControllerEpoch int32 // epoch of the controller that made the leadership decision
	ZkVersion       int32 // Stat.version of the state znode
}

// clone returns a deep copy.
func (l LeaderAndIsr) clone() LeaderAndIsr {
	l.Isr = slices.Clone(l.Isr)
	return l
}

// newLeaderAndIsr returns the next state after an election: new leader and ISR, leader
// epoch + 1, same zkVersion (the conditional write checks it). Matches Kafka's
// LeaderAndIsr.newLeaderAndIsr.
func (l LeaderAndIsr) newLeaderAndIsr(leader int32, isr []int32) LeaderAndIsr {
	return LeaderAndIsr{
		Leader:          leader,
		LeaderEpoch:     l.LeaderEpoch + 1,
		Isr:             slices.Clone(isr),
		ControllerEpoch: l.ControllerEpoch,
		ZkVersion:       l.ZkVersion,
	}
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener         string // listener name, e.g. "PLAINTEXT" or "INTERNAL"
	SecurityProtocol string // "PLAINTEXT", "SSL", "SASL_PLAINTEXT" or "SASL_SSL"
	Host             string
	Port             int32
}

// LiveBroker is a broker registered under /brokers/ids.
type LiveBroker struct {
	ID        int32
	Epoch     int64  // broker epoch: czxid of the registration znode (KIP-380)
	Rack      string // "" when broker.rack is not set
	Endpoints []Endpoint
}

// endpoint returns the endpoint for the listener name, or the first endpoint when listener
// is "" (Kafka's default inter-broker listener is the PLAINTEXT one, usually listed first).
func (b LiveBroker) endpoint(listener string) (Endpoint, bool) {
	for _, ep := range b.Endpoints {
		if listener == "" || ep.Listener == listener {
			return ep, true
		}
	}
	return Endpoint{}, false
}

// securityProtocolID maps a security protocol name to Kafka's SecurityProtocol id.
func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	default:
		return 0 // PLAINTEXT
	}
}

// contains reports whether id is in ids.
func contains(ids []int32, id int32) bool { return slices.Contains(ids, id) }
