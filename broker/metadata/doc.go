// Package metadata is the broker's MetadataCache: what the controller last
// told this broker about the cluster through UpdateMetadata requests — the
// live brokers with their endpoints per listener and rack, every partition's
// leader, leader epoch, ISR, replicas and offline replicas, and the active
// controller's id and epoch. As in Kafka, the cache is built only from
// UpdateMetadata; it never reads ZooKeeper.
//
// Must never import: zkutil, storage, server, replica (and no kmsg types: the
// UpdateMetadata handler translates the request into an Update).
//
// Concurrency: readers take an immutable *Snapshot with Cache.Snapshot and
// may keep it as long as they like (copy-on-write behind an atomic.Pointer;
// reads never lock). Apply is serialised by a mutex so concurrent updates do
// not lose each other's changes; it builds a new snapshot that shares the
// unchanged topics with the old one. No goroutines.
package metadata
