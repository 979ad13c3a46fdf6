package zkutil

import (
	"fmt"
	"strings"
)

// ACLResource names one ACL znode: Type is Kafka's Pascal-case resource type
// ("Topic", "Group", "Cluster", "TransactionalId", "DelegationToken"),
// PatternType ACLPatternLiteral or ACLPatternPrefixed.
type ACLResource struct {
	Type        string
	Name        string
	PatternType string
}

// ACLEntry is one ACL of a resource znode with Kafka's JSON keys and
// Pascal-case values (AclEntry.toMap): {"principal":"User:alice",
// "permissionType":"Allow","operation":"Read","host":"*"}.
type ACLEntry struct {
	Principal      string `json:"principal"`
	PermissionType string `json:"permissionType"`
	Operation      string `json:"operation"`
	Host           string `json:"host"`
}

type aclsJSON struct {
	Version *int       `json:"version"`
	ACLs    []ACLEntry `json:"acls"`
}

// EncodeACLs returns {"version":1,"acls":[...]} for a resource znode.
func EncodeACLs(acls []ACLEntry) []byte {
	v := 1
	if acls == nil {
		acls = []ACLEntry{}
	}
	return marshal(aclsJSON{Version: &v, ACLs: acls})
}

// DecodeACLs parses a resource znode. Empty data is no ACLs (Kafka
// AclEntry.fromBytes); a version other than 1, or an entry missing a key,
// is ErrMalformed. The values are returned as stored; the authorizer parses
// them (case-insensitively, as SecurityUtils does).
func DecodeACLs(data []byte) ([]ACLEntry, error) {
	const kind = "acls"
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	var j aclsJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return nil, err
	}
	if j.Version == nil || *j.Version != 1 {
		return nil, malformed(kind, fmt.Errorf("version must be 1"))
	}
	for _, e := range j.ACLs {
		if e.Principal == "" || e.PermissionType == "" || e.Operation == "" || e.Host == "" {
			return nil, malformed(kind, fmt.Errorf("entry %+v lacks a key", e))
		}
	}
	return j.ACLs, nil
}

// EncodeLiteralACLChange returns the /kafka-acl-changes payload: the
// resource type in Java enum form, a colon and the name ("TOPIC:orders",
// LiteralAclChangeStore.encode since Kafka 2.5). javaType is the upper-case
// enum name ("TRANSACTIONAL_ID").
func EncodeLiteralACLChange(javaType, name string) []byte {
	return []byte(javaType + ":" + name)
}

// DecodeLiteralACLChange splits a /kafka-acl-changes payload at its first
// colon into the resource type as written ("TOPIC" or, from Kafka 2.0-2.4,
// "Topic") and the name.
func DecodeLiteralACLChange(data []byte) (resourceType, name string, err error) {
	s := string(data)
	i := strings.IndexByte(s, ':')
	if i <= 0 || len(data) > maxZNodeBytes {
		return "", "", malformed("acl change", fmt.Errorf("want ResourceType:ResourceName, got %q", truncate(s)))
	}
	return s[:i], s[i+1:], nil
}

type extendedACLChangeJSON struct {
	Version      *int    `json:"version"`
	ResourceType *string `json:"resourceType"`
	Name         *string `json:"name"`
	PatternType  *string `json:"patternType"`
}

// EncodeExtendedACLChange returns the /kafka-acl-extended-changes payload
// {"version":1,"resourceType":"TOPIC","name":"app-","patternType":"PREFIXED"}.
func EncodeExtendedACLChange(javaType, name, patternType string) []byte {
	v := 1
	return marshal(extendedACLChangeJSON{Version: &v, ResourceType: &javaType, Name: &name, PatternType: &patternType})
}

// DecodeExtendedACLChange parses an extended change payload. A version
// above 1 or a missing field is ErrMalformed.
func DecodeExtendedACLChange(data []byte) (resourceType, name, patternType string, err error) {
	const kind = "extended acl change"
	var j extendedACLChangeJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return "", "", "", err
	}
	if j.Version == nil || *j.Version > 1 || j.ResourceType == nil || j.Name == nil || j.PatternType == nil {
		return "", "", "", malformed(kind, fmt.Errorf("want version 1 with resourceType, name and patternType"))
	}
	return *j.ResourceType, *j.Name, *j.PatternType, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
