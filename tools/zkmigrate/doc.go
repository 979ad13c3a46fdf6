// Package zkmigrate is zookeeper-security-migration (Kafka 2.8's
// kafka.admin.ZkSecurityMigrator): it sets the ACL of every znode of
// Kafka's trees to what zookeeper.set.acl would have created, so an
// existing cluster can be switched to secure ZooKeeper ACLs (or back)
// without recreating anything.
//
// Owns: zkmigrate.go (options, the identity checks, the session),
// walk.go (the ACL walk).
//
// What it changes, as Kafka's tool does:
//
//	/ (the chroot)                 its own ACL only
//	zkutil.SecureRootPaths()       each created if missing (not /controller),
//	                               then it and every znode below it
//	secure:    zkutil.DefaultACL(true, path): CREATOR_ALL for the session's
//	           identity plus world-read; /config/users/..., /config/brokers/...,
//	           /delegation_token/tokens/... CREATOR_ALL only
//	unsecure:  world:anyone cdrwa on every znode
//
// Identity: the JAAS file of -Djava.security.auth.login.config in
// KAFKA_OPTS, section Client (or -Dzookeeper.sasl.clientconfig), whose
// username/password become the ZooKeeper digest identity
// (broker/security/zkclient), or a TLS client certificate
// (--zk-tls-config-file, x509 identity). Kafka's tool authenticates the
// Client section with SASL instead (identity sasl:<user>); go-zookeeper
// has no SASL, so a Client section without username/password (Kerberos)
// is refused. The brokers must use the same identity (the same Client
// section or certificate) to keep writing the migrated znodes.
//
// Invariants: every request goes through zkutil (bounded retries on
// connection loss; a session expiry ends the run, as in Kafka); the walk is
// breadth-first with at most walkWorkers requests in flight and holds one
// level of paths at a time; a znode deleted during the walk is skipped
// with Kafka's warning.
//
// Concurrency: the walk's workers share only the level's result slice,
// under a mutex; nothing outlives the command.
package zkmigrate
