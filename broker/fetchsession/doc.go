// Package fetchsession is Kafka's incremental fetch session cache
// (KIP-227, Kafka 2.8 kafka.server.FetchSession / FetchSessionCache /
// FetchManager) as pure state: which partitions a session fetches, at which
// offsets, and what its client was last told, so that an incremental
// FetchRequest names only the partitions that changed and its response
// only the partitions with something new.
//
// It owns: the session cache (max.incremental.fetch.session.cache.slots
// slots), session ids and epochs, Kafka's eviction rules, the decision
// which context a request gets (full with a new session, full without a
// session, incremental, or an error) and which partitions an incremental
// response must carry.
//
// It must never import: anything of ours (it is a leaf: the fetch handler
// translates kmsg requests into Request values and reads the partitions
// itself); kmsg types stop at the handler (STYLE S1.3).
//
// # Protocol (FetchRequest v7+)
//
//	session_id  epoch   meaning (FetchManager.newContext)
//	0           -1      sessionless full fetch (no session; clients that do not want one)
//	0           0       full fetch, create a session if a slot can be had
//	S != 0      0       close session S, full fetch, create a new session
//	S != 0      -1      close session S, sessionless full fetch
//	S != 0      E > 0   incremental fetch in session S at epoch E:
//	                    FETCH_SESSION_ID_NOT_FOUND if S is not cached,
//	                    INVALID_FETCH_SESSION_EPOCH if E is not S's epoch
//	0           E > 0   FETCH_SESSION_ID_NOT_FOUND (no such session)
//
// A new session starts at epoch 1; each incremental request that is
// accepted moves it to the next epoch (wrapping from MaxInt32 to 1). An
// incremental request adds or updates the partitions it names and removes
// its forgotten topics; a session left with no partition is removed and
// that request is answered as a sessionless full fetch (session id 0).
//
// An incremental response carries a partition when it has records, an
// error, a preferred read replica, or a high watermark, log start offset
// or last stable offset other than the one last sent (Kafka 2.8 does not
// compare the last stable offset); an error also resets the cached high
// watermark to -1 so the partition is sent again once the error clears.
// Partitions that were sent move to the end of the session's order, so a
// response size limit does not starve the partitions at the end (Kafka
// 2.8's IncrementalFetchContext).
//
// # Changed-only incremental fetches (Samsa)
//
// Kafka reads every partition of the session for each incremental fetch,
// so an idle follower fetch of 3,000 partitions costs 3,000 reads. Here
// the cache keeps a change index (the sessions holding each partition) and
// each session a dirty list: Cache.Changed(tp), which the broker calls for
// every change the fetch purgatory hears of (log end, high watermark, last
// stable offset, log start, leadership, errors), puts tp on the dirty list
// of every session holding it and wakes the session's parked fetch. A
// fetch with Request.ChangedOnly examines only its dirty list (taken, and
// the flags cleared, before the handler reads, so a later change marks the
// partition again), which always holds the partitions the request names
// and those the last answer left hot (sent, errored, or with records it
// could not send: PartitionResponse.Hot). Every other partition would
// answer what its client was last told, which the response omits anyway,
// so the answer is the one a whole-session read gives. A new session
// starts with every partition dirty (a change between the full fetch's
// read and the session's creation reached no session). Session order is a
// sequence number per partition; a sent partition takes the next one.
//
// The sweep: that answer is Kafka's only if every change is notified. A
// change that reaches no session (a path that forgets to notify, now or in
// a later change) would leave its partition unanswered, a follower not
// fetching an acks=all append, for as long as the partition stays quiet.
// So a changed-only fetch at least Config.SweepEvery (5 s) after its
// session's last sweep examines every partition, as Kafka does on every
// fetch: a missed notice costs at most that long, never a stall. A
// partition the sweep must answer although nothing marked it, and for which
// no notice comes before the session's next fetch, is counted
// (Stats.Unnoticed) and logged, since each one names a missing notice.
// Cost: one whole-session read per session every 5 s instead of one per
// fetch (an idle follower fetch every replica.fetch.wait.max.ms, 500 ms).
// Measured at 10,000 idle replicas per broker with a 2 s sweep: 3.3–3.55 %
// of a core against 0.85–1.25 % without (each broker reads the two
// follower sessions' 3,333 partitions per sweep); 5 s keeps a missed
// notice far below replica.lag.time.max.ms and the request timeouts while
// costing 2.5× less. Reading every partition on every fetch (Kafka's way,
// Samsa before changed-only fetches) cost 8.45–8.50 %.
//
// # The notice contract (who calls Changed for what)
//
// Every change of what a fetch of a partition answers reaches Changed
// through the Fetch purgatory's Notify (broker/replica, the broker's log
// options), keyed by topic-partition only, so a notice needs no Partition
// object and survives any re-creation of one:
//
//	what a fetch answers          changed by                         notice (file)
//	leader log end (records)      leader append, txn marker          AppendAsLeader, AppendTxnMarker (replica/append.go, txn.go)
//	leader high watermark, LSO    a follower fetch moving it         ReadFrom (replica/read.go)
//	                              an append with an ISR of one       the append's notice
//	                              ISR shrink / expansion moving it   maybeShrinkIsr, expandLoop (replica/isr_shrink.go, isr_expand.go)
//	                              becoming leader                    BecomeLeaderOrFollower (replica/manager.go)
//	log start                     retention, DeleteRecords           storage OnLogStartMoved (broker/logs.go)
//	follower HW, log start        a follower append following them   appendAsFollower (replica/follower_log.go)
//	follower log end, HW, LSO     every truncation                   truncatedLocked (follower_log.go, log_end_start.go)
//	errors, leader epoch          LeaderAndIsr, StopReplica,         BecomeLeaderOrFollower, stopPartition (manager.go),
//	                              a failed log dir, shutdown         markOffline (offline.go), Close (NotifyAll)
//
// The converse direction, what a follower's fetch tells the leader about
// partitions it does not read: that the follower is alive at its last
// offsets (Kafka refreshes lastCaughtUpTimeMs on every fetch for every
// partition), so the broker reports each follower session fetch to the
// replica manager (replica/isr_caught_up.go), and an ISR expansion put off
// by an in-flight shrink is queued again by the shrink (isr_shrink.go):
// neither may wait for a read of an idle partition.
//
// Not notified, because the session examines them anyway: partitions the
// request names (new offsets, epochs), partitions the last answer left hot
// (records, errors, a byte limit or a replication throttle: 01_fetch_changed.go),
// and, for consumers under an authorizer, whole sessions (ACLs may change).
//
// Order: a notice runs after its change is visible to a read, and a fetch
// takes its dirty list before it reads, so a fetch either reads the change
// or is marked again for its next round: no notice is lost between the read
// and Finish. The converse does not hold: a read can see a change whose
// notice is still on its way (microseconds after an append's log end is
// published), so a sweep's answer with no notice is only counted if none
// came before the session's next fetch (unnoticed.go).
//
// # Eviction (FetchSessionCache.tryEvict)
//
// A new session needs a free slot. Without one, the least recently used
// session is evicted if it was unused for longer than EvictionAge (Kafka's
// MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, 120 s, not configurable in
// Kafka 2.8). Otherwise the least valuable evictable session is evicted if
// the new one is worth more: sessions compare by privileged
// (follower) first, then by partition count. A session younger than
// EvictionAge can be evicted only by a privileged (follower) session, and
// only if it is itself unprivileged (a consumer). So followers displace
// consumers, big sessions displace small ones, and young follower sessions
// are never displaced. Without a slot the request is still answered, as a
// full fetch with session id 0.
//
// # Concurrency
//
// Cache and Context are safe for concurrent use: the cache has one mutex
// for its maps, one for its change index, each session a mutex for its
// partitions (lock order: cache, then session; cache, then change index;
// change index, then session in Changed; nothing takes the change index
// while holding a session's mutex; a Context takes only its session's lock
// while the handler reports partitions). No goroutine is started; staleness is
// judged on use, never by a timer.
package fetchsession
