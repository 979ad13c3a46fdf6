// Package acl is Samsa's authorizer: Kafka 2.8's AclAuthorizer
// (kafka.security.authorizer.AclAuthorizer), switched on by
// authorizer.class.name. It owns the ACL cache, the decision functions and
// the ZooKeeper read-modify-write of ACLs; zkutil owns the znode paths and
// JSON.
//
// Must never import: broker (root), broker/server, broker/storage,
// broker/replica, broker/group, controller, tools, kmsg. It imports only
// zkutil and broker/principal.
//
// # Model
//
// A Binding is an Entry (principal, host, operation, Allow/Deny) on a
// Resource pattern (type, name, LITERAL or PREFIXED). Codes and names are
// Kafka's (ResourceType, AclOperation, AclPermissionType, PatternType).
//
// # Decision (Authorize)
//
//  1. super.users → allow.
//  2. Candidate ACLs: literal "*", literal name, every prefixed pattern the
//     name starts with.
//  3. None → allow.everyone.if.no.acl.found.
//  4. A matching Deny (principal equal or User:*, host equal or "*",
//     operation equal or All) → deny. Deny always wins.
//  5. A matching Allow for the operation or one implying it → allow:
//     Describe ⇐ Read, Write, Delete, Alter; DescribeConfigs ⇐ AlterConfigs.
//
// # ZooKeeper
//
//	/kafka-acl/<Type>/<name>                        {"version":1,"acls":[{"principal":"User:alice",
//	/kafka-acl-extended/prefixed/<Type>/<prefix>      "permissionType":"Allow","operation":"Read","host":"*"}]}
//	/kafka-acl-changes/acl_changes_0000000007       TOPIC:orders
//	/kafka-acl-extended-changes/acl_changes_0000000003
//	                                                {"version":1,"resourceType":"TOPIC","name":"app-","patternType":"PREFIXED"}
//
// <Type> is Pascal case (Topic, Group, Cluster, TransactionalId,
// DelegationToken). A writer sets the resource znode conditionally on its
// zkVersion (creating it when absent, deleting it when the set becomes
// empty), retrying on conflict up to 10 times, then creates the change
// notification; every broker's watch reloads that one resource.
//
// # Concurrency
//
// Authorize reads an immutable snapshot through an atomic pointer: no lock,
// no allocation. Writers (CreateACLs, DeleteACLs, the notification
// goroutine) hold Authorizer.mu and publish a new snapshot. Start launches
// the one notification goroutine; Close stops it. ZooKeeper watch callbacks
// only poke a channel (zkutil's dispatcher rule).
package acl
