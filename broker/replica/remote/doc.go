// Package remote connects the replica manager (broker/replica) to the rest
// of the cluster. It implements the two interfaces replica declares for
// what lies outside the broker process:
//
//	fetch_source.go  FetchSource: replica.FetchSource over peer. A follower's
//	                 Fetch (KIP-227 session per fetcher, through
//	                 broker/fetchsession), OffsetForLeaderEpoch and the
//	                 ListOffsets pair of LogRange, sent to the leader's
//	                 inter-broker listener.
//	isr_store.go     IsrStore: replica.IsrStore over zkutil (Kafka's
//	                 pre-AlterIsr path: the leader writes the partition state
//	                 znode conditionally on its zkVersion and announces the
//	                 change under /isr_change_notification).
//
// The broker builds both in its assembly (broker/lifecycle.go) and hands
// them to replica.New; replica itself imports neither peer nor zkutil.
//
// # Must never import
//
// broker (root), broker/server, broker/group, controller.
//
// # Concurrency
//
// FetchSource is safe for concurrent use. Each fetcher goroutine
// (num.replica.fetchers per leader) fetches over a client of its own, kept
// in its FollowerFetchResponse.Scratch, so its long polls never queue behind
// another fetcher's; the short OffsetForLeaderEpoch and ListOffsets calls
// share one client per leader. FetchSource.mu guards the client maps and is
// never held during a request. Close closes every client; a Fetch after it
// fails. IsrStore is a value over a zkutil.Client, safe for concurrent use.
package remote
