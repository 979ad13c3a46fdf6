// Package zkstore keeps Kafka 2.8's client quotas in ZooKeeper, as Kafka's ZK mode does:
// /config/users/<user>, /config/clients/<client-id> and /config/users/<user>/clients/<client-id>
// (names sanitized, <default> for the default entity; the paths are zkutil's), each a config
// znode whose quota keys (producer_byte_rate, consumer_byte_rate, request_percentage,
// controller_mutation_rate) are decimal strings beside other keys such as a user's SCRAM
// credentials, which it never touches. It reads and writes those entities for the client quota
// APIs and feeds a quota.Manager: Load at start, ApplyChange for each /config/changes
// notification that names a users/ or clients/ entity (the broker's config change listener
// calls it).
//
// # Must never import
//
// Anything of the broker but broker/quota; only zkutil below it. It keeps no state: every
// function reads ZooKeeper when called.
//
// # Invariants
//
// Set rewrites only quota keys and writes one change notification per call (zkutil's
// SetEntityConfig). ApplyChange builds a new Table per changed kind (a published Table is
// immutable).
package zkstore
