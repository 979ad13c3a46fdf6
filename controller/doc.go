// Package controller is Samsa's Kafka controller in ZooKeeper mode (Kafka 2.8's
// KafkaController): election on /controller and /controller_epoch, one event loop, the
// partition and replica state machines, pure decision functions (replica assignment, leader
// election strategies, state transitions) and the ChannelManager that sends LeaderAndIsr,
// UpdateMetadata and StopReplica to the brokers.
//
// Must never import: broker (root), broker/server, broker/storage, broker/replica,
// broker/group, broker/metadata, github.com/go-zookeeper/zk, sarama; it never builds a znode
// path (all ZooKeeper access goes through zkutil, behind the Store interface). kmsg request
// types appear only in channel*.go.
//
// # What it does
//
// Every broker runs a Controller. Start registers a watch on /controller and a zkutil
// new-session hook, then elects: the first broker to create /controller while bumping
// /controller_epoch in the same multi-op wins (Kafka 2.1+ algorithm; the first controller of
// a cluster has epoch 1). The winner runs the failover: watches on /brokers/ids (and each
// /brokers/ids/<id>), /brokers/topics (and each /brokers/topics/<t>),
// /isr_change_notification, /log_dir_event_notification, /admin/delete_topics,
// /admin/reassign_partitions and /admin/preferred_replica_election; leftover ISR and log-dir
// notifications are deleted; brokers, assignments and deletions are loaded and missing topic
// ids are assigned; UpdateMetadata with the live brokers (no partition, as Kafka 2.8) goes to
// every broker; then the partition states are read and the replica state machine sends
// LeaderAndIsr to each live replica and shrinks the ISR of dead ones, and the partition state
// machine elects leaders for partitions without a live leader
// (OfflinePartitionLeaderElection), in two rounds: the partitions Config.LeaderHint names as
// led by a dead broker first, each round's requests sent when it ends (failover_order.go);
// then reassignments and deletions resume.
//
// While active it handles:
//   - BrokerChange: new brokers get UpdateMetadata with every partition and LeaderAndIsr for
//     their replicas; partitions led by dead brokers elect the first live in-sync replica in
//     assignment order (or, with unclean.leader.election.enable, the first live replica),
//     otherwise keep leader -1 (NoLeader); dead replicas leave the ISR (never emptying it).
//     A broker that re-registered with a newer epoch (bounced) fails, then starts.
//   - BrokerModifications: a broker rewrote its registration (new endpoints or rack): the
//     sender reconnects and every broker gets UpdateMetadata.
//   - TopicChange / PartitionModifications: new partitions get a state znode (leader = first
//     live replica, ISR = live replicas, leader epoch 0), LeaderAndIsr (IsNew) to their
//     replicas and UpdateMetadata to every broker. Partitions added to a topic queued for
//     deletion are written back out. Topics without a topic id get one (Kafka 2.8's
//     processTopicIds, also at failover).
//   - IsrChangeNotification: re-read the named partitions, UpdateMetadata to every broker,
//     delete the notifications.
//   - LogDirEventNotification (on_log_dir_failure.go, KIP-112): for each live broker named by
//     a log-dir-failure notification (event 1), its replicas → Online, which sends it
//     LeaderAndIsr for every partition it hosts; the notifications are deleted (fenced).
//   - LeaderAndIsrResponseReceived: partitions a broker answered KAFKA_STORAGE_ERROR are
//     replicas on a failed log dir, NONE ones are online; cc.replicasOnOfflineDirs[broker]
//     becomes previous − online + offline, and the newly offline replicas go through
//     onReplicasBecomeOffline (shared with broker failure: partitions they led → Offline and
//     elect among online replicas, the replicas → Offline with ISR shrink). Answers with a
//     top-level error, to an older registration of the broker or to an earlier tenure are
//     ignored. A replica is online only if its broker is live (not shutting down, where it
//     matters) and it is not on a failed dir (isReplicaLive, isReplicaOnline); every election,
//     ISR choice and offline_replicas list uses that. A broker's entry is cleared when it
//     registers again or dies.
//   - TopicDeletion (on_topic_deletion.go, Kafka's TopicDeletionManager): UpdateMetadata with
//     leader -2, StopReplica (delete=false, then delete=true with leader epoch -2) to every
//     replica, and when every replica answered without error the topic's znodes, config and
//     marker are deleted. Dead or failed replicas make the deletion wait (retried when their
//     broker starts or on the next deletion event). Config.DeleteTopicDisabled
//     (delete.topic.enable=false) removes markers instead.
//
// Every ZooKeeper write is fenced by the zkVersion of /controller_epoch. A write that fails
// the fence (ErrControllerMoved) makes the controller resign at once and never retry it.
// Partition state writes are conditional on the state's zkVersion; a conflict re-reads and
// decides again (bounded rounds).
//
// Requests from brokers and admin clients, answered on the event goroutine:
//   - ControlledShutdown (API 7): the broker is marked shutting down, the partitions it leads
//     elect another in-sync replica (ControlledShutdown strategy), it leaves the ISRs it is
//     in, and the partitions it still leads are returned. The elections and the ISR shrinks
//     (disjoint partitions) share one round of fenced writes (Kafka 2.8 writes them one round
//     after the other). Shutting-down brokers never become leaders or join a new ISR.
//   - ElectLeaders (API 43): preferred or unclean elections for the given partitions, with a
//     per-partition error.
//   - AlterPartitionReassignments / ListPartitionReassignments (APIs 45, 46): KIP-455
//     reassignments (on_reassignment.go): the replica set grows to TRS + ORS with the
//     adding/removing sets persisted in /brokers/topics/<t>, completes when TRS ⊆ ISR (state
//     watch and ISR notifications), moves the leader into TRS if needed and stops and deletes
//     the removed replicas. /admin/reassign_partitions starts reassignments the same way and
//     loses its entries as they complete; a new controller resumes all of them.
//   - AlterIsr (API 56, IBP >= 2.7-IV2): leaders' ISR changes, checked against the broker
//     epoch, the leader epoch and the state's zkVersion, written fenced and announced with
//     UpdateMetadata. (Samsa's leaders currently write /state themselves and notify through
//     /isr_change_notification, as with IBP < 2.7-IV2; both paths work.)
//
// Preferred leaders also come back through /admin/preferred_replica_election
// (kafka-preferred-replica-election.sh) and, with Config.AutoLeaderRebalanceEnable, through
// the periodic leader-imbalance check (first run after min(5 s, interval)).
//
// # Concurrency
//
// One event goroutine (run) owns all controller state: the controller context, the request
// batch, the watch cancels and the timers. ZooKeeper callbacks (on zkutil's dispatcher
// goroutine) only append an event to a mutex-protected slice and signal a channel of
// capacity 1, so they never block. IsActive, Epoch and ActiveControllerID read atomics and
// may be called from any goroutine. ControlledShutdown, ElectLeaders, AlterIsr,
// AlterPartitionReassignments and ListPartitionReassignments queue an event and block until
// the event goroutine answers, the Controller stops, or their ctx ends.
//
// The ChannelManager runs one sender goroutine per live broker, each with its own queue
// (mutex + signal channel) and its own connection; requests to a broker leave in order and a
// failed request is retried after RetryBackoff until it succeeds or the broker is removed.
// Requests are immutable snapshots built on the event goroutine. Response callbacks run on
// the sender goroutine and only log, except StopReplica (delete=true) answers, queued as
// events for topic deletion, and LeaderAndIsr answers without a top-level error, reduced to
// their NONE and KAFKA_STORAGE_ERROR partitions (channel_lai_response.go) and queued as
// LeaderAndIsrResponseReceived events.
//
// Timers (Config.AfterFunc, default time.AfterFunc) only enqueue: the auto-rebalance timer's event carries the tenure
// that armed it and resignation stops it; an election nobody won is retried after 1 s.
//
// Locks (none is held across ZooKeeper or network I/O): ChannelManager.mu, then a sender's
// mu; eventQueue.mu is a leaf; Controller.lifecycle serialises Start and Shutdown only and is
// never taken by the event goroutine.
//
// Shutdown cancels the event goroutine and waits for it, cancels the /controller watch and
// the session hook, resigns if active (cancelling the duty watches and timers), then stops
// every sender and waits for them. Resignation (another controller elected,
// ErrControllerMoved, new ZooKeeper session) cancels the duty watches and stops the senders,
// but the event goroutine keeps running to take part in the next election.
//
// # Logging and metrics
//
// Logs carry component=controller and broker; every partition and replica state change is
// logged at INFO with controller_epoch, topic and partition (Kafka's state-change log).
// Metrics (names in metrics.go): ActiveControllerCount, OfflinePartitionsCount,
// GlobalPartitionCount, GlobalTopicCount, EventQueueSize, EventQueueTimeMs,
// UncleanLeaderElectionsPerSec, ControllerChangeCount.
package controller
