// Package zkconsumer is the legacy ZooKeeper-coordinated high-level
// consumer of Kafka 0.8–1.1 (Scala's ZookeeperConsumerConnector) as a Go
// library: group membership, partition ownership and (by default) offsets
// live in ZooKeeper under /consumers/<group>, every member computes the
// same partition assignment on its own, and messages are fetched from the
// partition leaders with Sarama. docs/zkconsumer.md is the user guide.
//
// It owns: the consumer id and thread ids, the range and roundrobin
// assignors (pure functions), the rebalance protocol, the per-partition
// fetchers, the streams handed to the application and offset commits to
// ZooKeeper or, with offsets.storage=kafka, to the group coordinator
// (OffsetCommit v1 / OffsetFetch v1).
//
// Must never import: broker/..., controller, tools, config, kmsg. It
// reaches ZooKeeper only through zkutil (paths, JSON codecs and the
// /consumers operations) and brokers only through Sarama (STYLE S1.1:
// tier 2, → zkutil, sarama).
//
// # ZooKeeper layout
//
//	/consumers/<group>/ids/<consumerId>          ephemeral  {"version":1,"subscription":{"t":2},"pattern":"static","timestamp":"1467000000000"}
//	/consumers/<group>/owners/<topic>/<p>        ephemeral  <consumerId>-<thread>
//	/consumers/<group>/offsets/<topic>/<p>       persistent next offset to read, ASCII decimal
//
// consumerId is "<group>_<host>-<ms>-<8 hex>" (consumer.id replaces the
// part after "<group>_"). Wildcard subscriptions register
// {"<regex>": streams} with pattern "white_list" or "black_list".
//
// # Rebalance
//
// A child watch on /consumers/<g>/ids, a data watch on each subscribed
// /brokers/topics/<t> (plus a child watch on /brokers/topics for wildcard
// subscriptions, and on /brokers/ids while no broker is known) and ZooKeeper
// session expiry each trigger a rebalance. One attempt: check the own
// registration (registering again if it vanished) and the brokers; pause
// the streams (Next hands out nothing until the rebalance ends) and wait,
// at most rebalance.processing.wait.ms, for every handed-out message to be
// marked processed; stop the fetchers and drop queued read-ahead; call
// Config.RebalanceListener's BeforeReleasingPartitions; commit processed
// offsets (auto.commit.enable); delete the own owner znodes; read every
// member's subscription and the topics' partitions; assign; create the
// owner znodes (on NodeExists: delete this attempt's claims, fail the
// attempt); call BeforeStartingFetchers; read committed offsets; start the
// fetchers. Up to
// rebalance.max.retries attempts, rebalance.backoff.ms apart. Samsa reads
// committed offsets after claiming (Kafka reads them before), so it sees
// the final commit of the previous owner.
//
// # Delivery guarantee
//
// At-least-once, and no duplicates from rebalances for an application that
// marks each message processed after its work. A message is processed when
// the application asks its stream for the next message or calls
// Stream.MarkDone; only processed offsets are committed, never fetched-ahead
// ones. A rebalance, and Close, first pause the streams and wait up to
// rebalance.processing.wait.ms (Samsa-specific; Kafka does not wait) until
// every stream's handed-out message is processed; then, with
// auto.commit.enable, the processed offsets of all owned partitions are
// committed before ownership is released. A message still unmarked when the
// wait ends (logged at WARN), or marked later, is delivered again (possibly
// to another member). Without auto commit, nothing is committed at
// rebalance: everything processed since the application's last
// CommitOffsets is delivered again. After a session expiry ownership is
// already lost, so nothing is committed either (as in Kafka).
//
// # Metrics
//
// metrics.go names them after the old consumer's MBeans
// (RebalanceRateAndTime, OwnedPartitionsCount, ZooKeeperCommitsPerSec,
// KafkaCommitsPerSec, MessagesPerSec); they go to Config.Metrics, never to
// go-metrics' DefaultRegistry.
//
// # Concurrency
//
// NewConnector, CreateMessageStreams* and Close are called by the owner;
// Close must not run concurrently with CreateMessageStreams*. CommitOffsets,
// Owned and Rebalances are safe from any goroutine. Each Stream is read by
// one goroutine at a time. Goroutines: one run goroutine (watch-triggered
// rebalances and auto commit; ZooKeeper callbacks only signal it), one
// fetcher per owned partition (stopped at each rebalance), plus Sarama's and
// zkutil's own. The RebalanceListener runs on the rebalance goroutine (the
// run goroutine, or the caller of CreateMessageStreams* for the first
// rebalance); it may call CommitOffsets but never Close. Close stops and waits for all of them. Lock order:
// commitMu → mu; no ZooKeeper or network I/O under mu.
package zkconsumer
