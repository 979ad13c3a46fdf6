// Package group is Samsa's consumer group coordinator (Kafka's
// GroupCoordinator, GroupMetadataManager and GroupMetadata): group
// membership and rebalances (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// static membership KIP-345, MEMBER_ID_REQUIRED KIP-394), committed offsets
// (OffsetCommit, OffsetFetch, OffsetDelete), DescribeGroups, ListGroups,
// DeleteGroups, offset expiry, and the __consumer_offsets record formats.
//
// # What it owns
//
//   - The in-memory state of every group whose __consumer_offsets partition
//     this broker leads: partition = Utils.abs(javaHashCode(group.id)) %
//     offsets.topic.num.partitions (PartitionFor).
//   - The binary key and value schemas of __consumer_offsets (codec.go).
//   - Loading a partition by replaying it when this broker becomes its
//     leader (BecomeLeader) and dropping its groups when it stops (Resign).
//
// The package speaks plain Go values and Kafka error codes (kerr codes;
// STYLE S1.3): the broker's NN_*.go handlers translate kmsg requests. It
// writes through the OffsetLog interface (offset_log.go), which the broker
// implements over broker/replica, and reads time from a Clock.
//
// It must never import: broker/server, broker/replica, broker/storage,
// controller, zkutil, sarama, or kmsg (tests may use broker/storage). It
// imports broker/record (to build and read batches), logrus and kerr.
//
// # Rebalances
//
// Join, sync and heartbeat follow Kafka 2.8.1's GroupCoordinator,
// including KAFKA-12890's pending syncs (group_pending_sync.go): members
// that have not sent SyncGroup within the rebalance timeout after the
// join completed are removed and the group rebalances. Every rebalance
// gets one reason (rebalance_reason.go, KIP-800's kinds) when it starts:
// logged at INFO, passed to Options.OnRebalance, kept in a per-group
// history that Coordinator.Rebalances returns; more than StormCount
// rebalances within StormWindow is a storm (storm.go), logged once at WARN
// with the client causing it. History and storm state live only in the
// group's goroutine and its published snapshot: a coordinator that loads
// the group afresh starts them empty.
//
// # Concurrency
//
// Each group is owned by one goroutine (group.run, STYLE S6.6) with two
// channels: reqCh for handler calls and controlCh for timer firings and
// append completions; control events are served first. Handlers send a
// closure and wait for its reply, the group's exit, or their ctx. A
// JoinGroup waits inside the group until the rebalance completes; the
// goroutine never blocks on it (reply channels are buffered).
//
// Writes to __consumer_offsets (group metadata after SyncGroup, offset
// commits, tombstones) run in a helper goroutine, one at a time per group
// so records reach the log in decision order; the outcome returns through
// controlCh. A commit becomes visible to OffsetFetch only once appended.
// Each append's offsets.commit.timeout.ms runs from when it was queued, so
// a stuck append cannot delay the ones behind it by a timeout each; the
// group goroutine never waits for an append, so heartbeats are served (and
// move session deadlines) while one is stuck.
//
// Coordinator.mu guards the partition table (which partitions are owned or
// loading, and their groups); it is never held while calling OffsetLog or
// waiting for a group. The Coordinator starts group, loader, append and
// expiry goroutines through one WaitGroup; Shutdown stops every group
// (pending calls get NOT_COORDINATOR), cancels loads and in-flight
// appends, and waits for all of them. All exported methods are safe for
// concurrent use.
//
// # __consumer_offsets format (Kafka 2.8, classic encoding, big-endian)
//
// string = int16 length + UTF-8 bytes (-1 = null for nullable strings);
// bytes = int32 length + bytes.
//
//	offset commit key  (version 0 or 1; Samsa writes 1)
//	  version int16 | group string | topic string | partition int32
//	group metadata key (version 2)
//	  version int16 | group string
//
//	offset commit value
//	  v0: version | offset int64 | metadata string | commit_timestamp int64
//	  v1: version | offset int64 | metadata string | commit_timestamp int64 | expire_timestamp int64
//	  v2: version | offset int64 | metadata string | commit_timestamp int64
//	  v3: version | offset int64 | leader_epoch int32 | metadata string | commit_timestamp int64
//	  Samsa writes v1 when the commit carried retention_time_ms, else v3.
//
//	group metadata value
//	  version int16 | protocol_type string | generation int32 |
//	  protocol nullable string | leader nullable string |
//	  [v2+] current_state_timestamp int64 | members int32 count, each:
//	    member_id string | [v3] group_instance_id nullable string |
//	    client_id string | client_host string | [v1+] rebalance_timeout int32 |
//	    session_timeout int32 | subscription bytes | assignment bytes
//	  Samsa writes v3.
//
// A record with a null value is a tombstone: DeleteGroups writes one for
// the group key and each offset key, OffsetDelete, offset expiry and the
// removal of a deleted topic's offsets (HandleDeletedPartitions) for the
// offset keys. The topic is compacted, so only the last record per key
// survives; a load replays the partition from its log start offset to its
// log end offset and keeps the last value per key. For example group
// "my-group" lives in partition PartitionFor("my-group", 50) of
// __consumer_offsets, i.e. the directory "__consumer_offsets-<p>" under a
// log dir.
package group
