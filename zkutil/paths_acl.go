package zkutil

import "strings"

// ACL znodes of Kafka's AclAuthorizer (kafka.zk.ZkData: ZkAclStore,
// ZkAclChangeStore, ExtendedAclZNode).
const (
	aclLiteralPath         = "/kafka-acl"
	aclExtendedPath        = "/kafka-acl-extended"
	aclLiteralChangesPath  = "/kafka-acl-changes"
	aclExtendedChangesPath = "/kafka-acl-extended-changes"
	// ACLChangeSeqPrefix prefixes the persistent-sequential children of both
	// change queues (ZkAclChangeStore.SequenceNumberPrefix).
	ACLChangeSeqPrefix = "acl_changes_"
)

// Pattern types as the ACL paths and the extended change JSON spell them
// (Java PatternType names).
const (
	ACLPatternLiteral  = "LITERAL"
	ACLPatternPrefixed = "PREFIXED"
)

// ACLStorePath is the root of one pattern type's ACL store: /kafka-acl for
// LITERAL, /kafka-acl-extended/<pattern in lower case> otherwise
// (/kafka-acl-extended/prefixed).
func ACLStorePath(patternType string) string {
	if patternType == ACLPatternLiteral {
		return aclLiteralPath
	}
	return aclExtendedPath + "/" + strings.ToLower(patternType)
}

// ACLTypePath is <store>/<ResourceType>, the parent of one resource type's
// ACL znodes; resourceType is Kafka's Pascal-case name ("Topic",
// "TransactionalId").
func ACLTypePath(patternType, resourceType string) string {
	return ACLStorePath(patternType) + "/" + resourceType
}

// ACLResourcePath is <store>/<ResourceType>/<name>, for example
// /kafka-acl/Topic/orders or /kafka-acl-extended/prefixed/Group/app-.
// Names are not escaped, as in Kafka.
func ACLResourcePath(r ACLResource) string {
	return ACLTypePath(r.PatternType, r.Type) + "/" + r.Name
}

// ACLChangesPath is the change queue of a pattern type: /kafka-acl-changes
// for LITERAL, /kafka-acl-extended-changes for the others.
func ACLChangesPath(patternType string) string {
	if patternType == ACLPatternLiteral {
		return aclLiteralChangesPath
	}
	return aclExtendedChangesPath
}

// ACLPatternTypes lists the pattern types with a store, in Kafka's order.
func ACLPatternTypes() []string { return []string{ACLPatternLiteral, ACLPatternPrefixed} }

// ACLRootPaths lists the top-level ACL znodes (ZkAclStore.securePaths plus
// ExtendedAclZNode), for the ACL choice of zookeeper.set.acl.
func ACLRootPaths() []string {
	return []string{aclLiteralPath, aclLiteralChangesPath, aclExtendedPath, aclExtendedChangesPath}
}
