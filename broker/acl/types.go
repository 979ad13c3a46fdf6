package acl

import "strings"

// ResourceType is Kafka's ResourceType, with its wire codes.
type ResourceType int8

// Resource types (org.apache.kafka.common.resource.ResourceType).
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
)

// numResourceTypes bounds the per-type arrays of a snapshot.
const numResourceTypes = 7

// Operation is Kafka's AclOperation, with its wire codes.
type Operation int8

// Operations (org.apache.kafka.common.acl.AclOperation).
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
)

// Permission is Kafka's AclPermissionType.
type Permission int8

// Permissions (org.apache.kafka.common.acl.AclPermissionType).
const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	Deny              Permission = 2
	Allow             Permission = 3
)

// PatternType is Kafka's PatternType (KIP-290).
type PatternType int8

// Pattern types (org.apache.kafka.common.resource.PatternType).
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// ClusterName is the name of the one Cluster resource ("kafka-cluster").
const ClusterName = "kafka-cluster"

// Wildcard is the resource name, principal name and host that match all.
const Wildcard = "*"

// Java enum names, indexed by code; the ZooKeeper form is their Pascal case
// (SecurityUtils.toPascalCase).
var (
	resourceNames   = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN"}
	operationNames  = [...]string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE"}
	permissionNames = [...]string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
	patternNames    = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
)

func name(names []string, code int8) string {
	if code < 0 || int(code) >= len(names) {
		return "UNKNOWN"
	}
	return names[code]
}

// String is the Java enum name ("TRANSACTIONAL_ID"), as kafka-acls.sh prints it.
func (t ResourceType) String() string { return name(resourceNames[:], int8(t)) }

// String is the Java enum name ("IDEMPOTENT_WRITE").
func (o Operation) String() string { return name(operationNames[:], int8(o)) }

// String is the Java enum name ("ALLOW").
func (p Permission) String() string { return name(permissionNames[:], int8(p)) }

// String is the Java enum name ("PREFIXED").
func (p PatternType) String() string { return name(patternNames[:], int8(p)) }

// Pascal is the ZooKeeper spelling ("TransactionalId", "IdempotentWrite").
func pascal(javaName string) string {
	var b strings.Builder
	up := true
	for _, r := range javaName {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(r)
			up = false
		default:
			b.WriteString(strings.ToLower(string(r)))
		}
	}
	return b.String()
}

// parse finds s among names, case-insensitively and ignoring underscores, as
// SecurityUtils.valueFromMap and the Java fromString methods accept both
// "IdempotentWrite" and "IDEMPOTENT_WRITE". It returns 0 (UNKNOWN) when
// nothing matches.
func parse(names []string, s string) int8 {
	key := strings.ToUpper(strings.ReplaceAll(s, "_", ""))
	for i, n := range names {
		if strings.ReplaceAll(n, "_", "") == key {
			return int8(i)
		}
	}
	return 0
}

// ParseResourceType parses any Kafka spelling ("Topic", "TOPIC",
// "transactional-id" is not one); unknown → ResourceUnknown.
func ParseResourceType(s string) ResourceType { return ResourceType(parse(resourceNames[:], s)) }

// ParseOperation parses "Read", "READ", "IdempotentWrite", "IDEMPOTENT_WRITE"; unknown → OpUnknown.
func ParseOperation(s string) Operation { return Operation(parse(operationNames[:], s)) }

// ParsePermission parses "Allow" / "DENY"; unknown → PermissionUnknown.
func ParsePermission(s string) Permission { return Permission(parse(permissionNames[:], s)) }

// ParsePatternType parses "literal", "PREFIXED", "any", "match"; unknown → PatternUnknown.
func ParsePatternType(s string) PatternType { return PatternType(parse(patternNames[:], s)) }

// concrete reports whether t names a real resource type (not ANY/UNKNOWN).
func (t ResourceType) concrete() bool { return t >= ResourceTopic && t <= ResourceDelegationToken }

// impliedBy lists the operations whose Allow grants op (AclAuthorizer
// authorizeAction: Describe ⇐ Read, Write, Delete, Alter; DescribeConfigs ⇐
// AlterConfigs). Deny is never widened this way.
func impliedBy(op Operation) []Operation {
	switch op {
	case OpDescribe:
		return []Operation{OpDescribe, OpRead, OpWrite, OpDelete, OpAlter}
	case OpDescribeConfigs:
		return []Operation{OpDescribeConfigs, OpAlterConfigs}
	}
	return nil
}

// SupportedOperations is AclEntry.supportedOperations: the operations that
// mean something on a resource type (besides All), for KIP-430's
// authorized-operations bit fields and kafka-acls.sh's validation.
func SupportedOperations(t ResourceType) []Operation {
	switch t {
	case ResourceTopic:
		return []Operation{OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs}
	case ResourceGroup:
		return []Operation{OpRead, OpDescribe, OpDelete}
	case ResourceCluster:
		return []Operation{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
	case ResourceTransactionalID:
		return []Operation{OpDescribe, OpWrite}
	case ResourceDelegationToken:
		return []Operation{OpDescribe}
	}
	return nil
}
