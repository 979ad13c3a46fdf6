// Package acls is kafka-acls (Kafka 2.8's kafka.admin.AclCommand).
//
// Owns: acls.go (options, the add/remove/list actions and their output),
// acls_backend.go (the two back ends: --authorizer-properties writes the
// ACL znodes with the authorizer's own store, broker/acl.Store, plus the
// change notification; --bootstrap-server sends CreateAcls, DescribeAcls
// and DeleteAcls through Sarama's ClusterAdmin).
//
// Output formats: Kafka's, byte for byte ("Adding ACLs for resource
// `ResourcePattern(...)`:", then one TAB-indented "(principal=..., host=...,
// operation=..., permissionType=...)" line per ACL, "Current ACLs for
// resource ..."), because scripts diff it.
//
// Concurrency: none of its own; one client per invocation.
package acls
