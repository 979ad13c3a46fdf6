package acl

import (
	"errors"
	"fmt"
	"strings"

	"samsa/broker/principal"
)

// Errors of ACL validation and storage.
var (
	// ErrInvalidBinding: a binding CreateACLs cannot store (Kafka answers
	// INVALID_REQUEST).
	ErrInvalidBinding = errors.New("acl: invalid acl binding")
	// ErrUpdateConflict: the conditional ZooKeeper write lost to concurrent
	// writers more times than the retry bound allows.
	ErrUpdateConflict = errors.New("acl: too many concurrent updates")
)

// Resource is Kafka's ResourcePattern: a type, a name and how the name
// matches (literal, or a prefix).
type Resource struct {
	Type    ResourceType
	Name    string
	Pattern PatternType
}

// String is Java's ResourcePattern.toString, which kafka-acls.sh prints:
// "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)".
func (r Resource) String() string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", r.Type, r.Name, r.Pattern)
}

// Entry is Kafka's AccessControlEntry.
type Entry struct {
	Principal  principal.Principal
	Host       string
	Operation  Operation
	Permission Permission
}

// String is Java's AccessControlEntry.toString without the class name, as
// kafka-acls.sh prints it: "(principal=User:alice, host=*, operation=READ,
// permissionType=ALLOW)".
func (e Entry) String() string {
	return fmt.Sprintf("(principal=%s, host=%s, operation=%s, permissionType=%s)", e.Principal, e.Host, e.Operation, e.Permission)
}

// Binding is Kafka's AclBinding: an entry on a resource.
type Binding struct {
	Resource Resource
	Entry    Entry
}

// ParsePrincipal parses "Type:name" (SecurityUtils.parseKafkaPrincipal);
// anything without a colon, or with an empty type, is an error.
func ParsePrincipal(s string) (principal.Principal, error) {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return principal.Principal{}, fmt.Errorf("%w: expected a string in format principalType:principalName but got %q", ErrInvalidBinding, s)
	}
	return principal.Principal{Type: s[:i], Name: s[i+1:]}, nil
}

// Validate checks what Kafka checks before storing a binding
// (AuthorizerUtils.validateAclBinding and KafkaApis.handleCreateAcls):
// concrete type, pattern, operation and permission, a non-empty name, and
// "kafka-cluster" as the only Cluster name.
func (b Binding) Validate() error {
	r, e := b.Resource, b.Entry
	switch {
	case !r.Type.concrete():
		return fmt.Errorf("%w: resource type %s", ErrInvalidBinding, r.Type)
	case r.Pattern != PatternLiteral && r.Pattern != PatternPrefixed:
		return fmt.Errorf("%w: pattern type %s", ErrInvalidBinding, r.Pattern)
	case e.Operation < OpAll || e.Operation > OpIdempotentWrite:
		return fmt.Errorf("%w: operation %s", ErrInvalidBinding, e.Operation)
	case e.Permission != Allow && e.Permission != Deny:
		return fmt.Errorf("%w: permission type %s", ErrInvalidBinding, e.Permission)
	case r.Name == "":
		return fmt.Errorf("%w: Invalid empty resource name", ErrInvalidBinding)
	case r.Type == ResourceCluster && r.Name != ClusterName:
		return fmt.Errorf("%w: The only valid name for the CLUSTER resource is %s", ErrInvalidBinding, ClusterName)
	case e.Principal.Type == "":
		return fmt.Errorf("%w: empty principal", ErrInvalidBinding)
	case e.Host == "":
		return fmt.Errorf("%w: empty host", ErrInvalidBinding)
	}
	return nil
}

// Filter is Kafka's AclBindingFilter: nil Name, Principal and Host match
// anything; ResourceAny, PatternAny, OpAny and PermissionAny likewise.
// PatternMatch matches every pattern that would apply to the named resource
// (literal equal or "*", prefixes of the name).
type Filter struct {
	Type       ResourceType
	Name       *string
	Pattern    PatternType
	Principal  *string
	Host       *string
	Operation  Operation
	Permission Permission
}

// MatchesResource is Java's ResourcePatternFilter.matches.
func (f Filter) MatchesResource(r Resource) bool {
	if f.Type != ResourceAny && f.Type != r.Type {
		return false
	}
	if f.Pattern != PatternAny && f.Pattern != PatternMatch && f.Pattern != r.Pattern {
		return false
	}
	if f.Name == nil {
		return true
	}
	if f.Pattern == PatternAny || f.Pattern == r.Pattern {
		return *f.Name == r.Name
	}
	switch r.Pattern {
	case PatternLiteral:
		return *f.Name == r.Name || r.Name == Wildcard
	case PatternPrefixed:
		return strings.HasPrefix(*f.Name, r.Name)
	}
	return false
}

// MatchesEntry is Java's AccessControlEntryFilter.matches.
func (f Filter) MatchesEntry(e Entry) bool {
	if f.Principal != nil && *f.Principal != e.Principal.String() {
		return false
	}
	if f.Host != nil && *f.Host != e.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != e.Operation {
		return false
	}
	return f.Permission == PermissionAny || f.Permission == e.Permission
}

// exactResource returns the one resource the filter can match, when it is
// that precise (Java ResourcePatternFilter.matchesAtMostOne).
func (f Filter) exactResource() (Resource, bool) {
	if !f.Type.concrete() || f.Name == nil || (f.Pattern != PatternLiteral && f.Pattern != PatternPrefixed) {
		return Resource{}, false
	}
	return Resource{Type: f.Type, Name: *f.Name, Pattern: f.Pattern}, true
}

// ValidateFilter checks a Describe/Delete filter: Kafka answers
// INVALID_REQUEST for UNKNOWN codes in it.
func (f Filter) Validate() error {
	if f.Type == ResourceUnknown || f.Pattern == PatternUnknown || f.Operation == OpUnknown || f.Permission == PermissionUnknown {
		return fmt.Errorf("%w: filter contains UNKNOWN elements", ErrInvalidBinding)
	}
	return nil
}
