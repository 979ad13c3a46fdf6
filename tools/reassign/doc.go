// Package reassign is kafka-reassign-partitions (Kafka 2.8's
// ReassignPartitionsCommand), kafka-leader-election (LeaderElectionCommand)
// and the deprecated kafka-preferred-replica-election.
//
// Owns: reassign.go (options, --generate/--execute/--verify/--cancel/--list
// and their output), reassign_json.go (the reassignment and
// topics-to-move JSON, parsed and printed as Kafka's), reassign_backend.go
// (the --zookeeper back end on /admin/reassign_partitions and the
// --bootstrap-server back end over the Admin API), reassign_admin.go (the
// KIP-455 AlterPartitionReassignments / ListPartitionReassignments and
// ElectLeaders calls), leader_election.go.
//
// Output formats: Kafka's lines ("Current partition replica assignment",
// the JSON, "Successfully started partition reassignments for t-0,t-1",
// "Reassignment of partition t-0 is complete.", "Successfully completed
// leader election (PREFERRED) for partitions t-0"), because operators'
// scripts grep them.
//
// Concurrency: none of its own.
package reassign
