package wire

// Samsa's own tagged fields. Kafka brokers skip unknown tags, so a client
// may send them to any broker; only Samsa acts on them.

// LogEndReassignmentTag is the tag of the Samsa field "start new replicas
// at the leader's log end" (value 0x01) on a partition of
// AlterPartitionReassignments v0 (broker/45_alter_partition_reassignments.go;
// kafka-reassign-partitions --log-end sends it).
const LogEndReassignmentTag = 0x5341
