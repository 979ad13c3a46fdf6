// Package replica is the broker's ReplicaManager: the partitions this
// broker hosts, whether it leads or follows each, the ISR and the high
// watermark, appends with acks semantics and min.insync.replicas, reads for
// consumers and followers (read.go; a consumer read with
// ReadParams.AnyReplica may also be served by a follower replica up to its
// own high watermark, KIP-392, but never by a replica whose LeaderAndIsr
// state is not applied yet: its high watermark is still the checkpoint's),
// and (fetcher.go) the follower fetchers that copy the leaders' logs.
//
// Domain types only: LeaderAndIsr and StopReplica arrive as the plain
// structs of types.go; the broker's API handlers translate kmsg requests
// into them (STYLE S1.3). Logs come from broker/storage; waiting requests
// park in broker/purgatory.
//
// Must never import: broker (root), server, group, controller, sarama.
//
// Change notices: every change of what a fetch of a partition answers is
// told to the Fetch purgatory (Notify), once the change is complete, and
// through its Observer reaches the fetch sessions holding the partition
// (a changed-only incremental fetch reads nothing else): leader appends and
// transaction markers (append.go, txn.go), high-watermark moves (a
// follower's fetch, ISR changes), leadership changes, StopReplica and
// offline dirs; on a follower, an append that moves its high watermark or
// log start (follower_log.go) and every truncation (by leader epoch,
// realignment, a restart at the leader's log start or end), which lowers
// the high watermark and last stable offset or moves the log start. Log
// start moves that storage makes on its own (retention, DeleteRecords)
// reach the purgatory through the broker's LogOptions.OnLogStartMoved hook.
//
// Offline partitions (offline.go, KIP-112): HandleLogDirFailure moves every
// partition whose log is in a failed log dir out of the partition map into
// an offline set (Kafka's HostedPartition.Offline): no fetching, no
// leading, every request on it answers ErrOffline (KAFKA_STORAGE_ERROR), a
// LeaderAndIsr or StopReplica for it answers ErrOffline without touching
// it. A LeaderAndIsr whose log cannot be opened or created (a storage
// error), or whose log sits in a failed dir, takes that partition offline
// too. Offline lasts until the broker restarts.
//
// Concurrency: Manager's methods are safe for concurrent use.
// Manager.stateChange serialises LeaderAndIsr, StopReplica and
// HandleLogDirFailure (Kafka's replicaStateChangeLock; held across their
// I/O). Manager.mu guards only the partition map and the offline set
// (never held during I/O). Each Partition has
// its own mu (Kafka's leaderIsrUpdateLock): leadership changes and ISR/HW
// updates take it for writing; appends and reads take it for reading, and
// the storage.Log serialises appends itself. Lock order:
// Manager.stateChange -> Manager.mu -> Partition.mu -> storage.Log's lock
// (the offline dir set's lock is a leaf). An expansion calls the
// IsrStore with Partition.mu held for writing (Kafka 2.8's ZooKeeper path
// writes the state znode under leaderIsrUpdateLock too); a shrink calls it
// with no lock held, keeping the old ISR until it returns (isr_shrink.go,
// as Kafka 2.7+'s pending ISR state); the IsrListener runs under
// Partition.mu; the TopicListener runs with no lock held.
//
// ISR maintenance (isr.go, only with Config.Isr): a leader expands the ISR
// on the follower-fetch path, when a follower outside it has fetched up to
// the high watermark and to the start of the current leader epoch
// (maybeExpandIsr); the ISR loop shrinks it every
// replica.lag.time.max.ms/2, dropping followers that are behind the log end
// and have not caught up for replica.lag.time.max.ms (maybeShrinkIsr). Both
// write the partition state znode conditionally on its zkVersion through the
// IsrStore (a failed write keeps the old ISR until the next LeaderAndIsr)
// and queue the partition for /isr_change_notification, which the same loop
// writes every 2.5 s once the changes have been quiet for 5 s or the last
// write is 60 s old (Kafka's maybePropagateIsrChanges).
//
// Follower fetchers (fetcher.go): after a round that appended data the next
// fetch is sent at once, from the fetcher's own goroutine (the new fetch
// offsets are what move the leader's high watermark). A failed request
// pauses the whole fetcher for replica.fetch.backoff.ms; an error of one
// partition only keeps that partition out of requests for as long (Kafka's
// delayPartitions). A fetcher keeps its request from round to round and
// changes it only where something changed (fetcher_request.go: partitions
// added, removed, truncated, delayed or released, its own appends, a log
// start moved by retention via Manager.LogStartMoved, throttled partitions
// every round), handing the source that delta (FollowerFetch.Changed,
// Forgotten) so that an idle round looks at no partition; FetchSource.Fetch
// fills a FollowerFetchResponse whose record bytes stay valid until the
// next Fetch with it.
//
// Time is injected (STYLE S6.11): Config.Now reads the clock and
// Config.After times the ISR loop, the fetchers' error backoff, partition
// delays and quota pause, so tests can drive them with a manual clock.
//
// Goroutines, all owned by the Manager and stopped by Manager.Close: the
// ISR loop (started by New when Config.Isr is set) and the follower
// fetchers, one per source broker (started by LeaderAndIsr making this
// broker a follower).
package replica
