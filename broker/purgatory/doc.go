// Package purgatory parks requests that must wait for something to happen to
// a partition: an acks=all produce waiting for the high watermark to pass its
// last offset (Kafka's DelayedProduce), a fetch waiting for min_bytes or for
// the high watermark to move (Kafka's DelayedFetch).
//
// It owns only the waiting; what "complete" means is a closure the caller
// passes in. Producers of events (appends, high-watermark moves, leadership
// changes) call Notify with the partitions they touched, and every waiter
// watching one of those partitions re-runs its check.
//
// Must never import: any other samsa package.
//
// Concurrency: every method is safe for concurrent use. The package starts no
// goroutines. Wait parks the calling goroutine (in Samsa, a connection's reader
// goroutine for a long-poll fetch, its writer goroutine for an acks=all
// produce) on a channel until a Notify for one of its keys, its deadline (a
// runtime timer, not a goroutine) or its context's cancellation. Notify never
// blocks: a waiter's wake-up channel has a buffer of one, and a wake-up that
// finds the buffer full is merged with the pending one. Waiters (channel and
// timer) are recycled through a sync.Pool once unregistered. Lock order: the
// Purgatory's mu is a leaf; check functions run without it held.
package purgatory
