package zkutil

import (
	"errors"
	"strings"
	"unicode"
)

// ACLNoZkVersion is the zkVersion GetACLs reports for a resource without a
// znode; SetACLs with it creates the znode (Kafka
// createAclsForResourceIfNotExists).
const ACLNoZkVersion int32 = -1

// GetACLs reads one resource's ACLs and the znode's zkVersion, or nil and
// ACLNoZkVersion when it has no znode (Kafka getVersionedAclsForResource).
// Errors: ErrMalformed, connection errors.
func (c *Client) GetACLs(r ACLResource) ([]ACLEntry, int32, error) {
	data, st, err := c.Get(ACLResourcePath(r))
	if errors.Is(err, ErrNoNode) {
		return nil, ACLNoZkVersion, nil
	}
	if err != nil {
		return nil, 0, err
	}
	acls, err := DecodeACLs(data)
	return acls, st.Version, err
}

// SetACLs writes a resource's whole ACL set conditionally: zkv
// ACLNoZkVersion creates the znode (and its parents), any other value sets
// it only at that version; an empty set deletes the znode at zkv. It returns
// the new zkVersion (ACLNoZkVersion after a delete). ErrBadVersion or
// ErrNodeExists means a concurrent writer won: re-read and retry (Kafka
// AclAuthorizer.updateResourceAcls). It does not write the change
// notification; call WriteACLChange after it.
func (c *Client) SetACLs(r ACLResource, acls []ACLEntry, zkv int32) (int32, error) {
	p := ACLResourcePath(r)
	switch {
	case len(acls) == 0 && zkv == ACLNoZkVersion:
		return ACLNoZkVersion, nil
	case len(acls) == 0:
		err := c.Delete(p, zkv)
		if errors.Is(err, ErrNoNode) {
			err = ErrBadVersion
		}
		return ACLNoZkVersion, err
	case zkv == ACLNoZkVersion:
		if _, err := c.CreateRecursive(p, EncodeACLs(acls), Persistent); err != nil {
			return 0, err
		}
		return 0, nil
	default:
		st, err := c.Set(p, EncodeACLs(acls), zkv)
		if errors.Is(err, ErrNoNode) {
			err = ErrBadVersion
		}
		return st.Version, err
	}
}

// ListACLResources returns every resource that has an ACL znode, in both
// stores (Kafka getResourceTypes + getResourceNames, per store).
func (c *Client) ListACLResources() ([]ACLResource, error) {
	var out []ACLResource
	for _, pt := range ACLPatternTypes() {
		types, err := c.sortedChildren(ACLStorePath(pt), "")
		if err != nil {
			return nil, err
		}
		for _, typ := range types {
			names, err := c.sortedChildren(ACLTypePath(pt, typ), "")
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				out = append(out, ACLResource{Type: typ, Name: n, PatternType: pt})
			}
		}
	}
	return out, nil
}

// WriteACLChange creates the change notification for r in its queue:
// "TOPIC:orders" in /kafka-acl-changes for literal resources, the JSON
// event in /kafka-acl-extended-changes for the others (Kafka
// createAclChangeNotification).
func (c *Client) WriteACLChange(r ACLResource) error {
	var data []byte
	if r.PatternType == ACLPatternLiteral {
		data = EncodeLiteralACLChange(JavaResourceType(r.Type), r.Name)
	} else {
		data = EncodeExtendedACLChange(JavaResourceType(r.Type), r.Name, r.PatternType)
	}
	_, err := c.createSequential(ACLChangesPath(r.PatternType), ACLChangeSeqPrefix, data)
	return err
}

// GetACLChanges returns the acl_changes_ children of patternType's queue in
// sequence order.
func (c *Client) GetACLChanges(patternType string) ([]string, error) {
	return c.sortedChildren(ACLChangesPath(patternType), ACLChangeSeqPrefix)
}

// ReadACLChange reads one change notification of patternType's queue: the
// resource it names (Type in Pascal case) and its creation time (ms), for
// the 15-minute purge. Errors: ErrNoNode, ErrMalformed.
func (c *Client) ReadACLChange(patternType, node string) (ACLResource, int64, error) {
	data, st, err := c.Get(ACLChangesPath(patternType) + "/" + node)
	if err != nil {
		return ACLResource{}, 0, err
	}
	if patternType == ACLPatternLiteral {
		typ, name, err := DecodeLiteralACLChange(data)
		return ACLResource{Type: PascalResourceType(typ), Name: name, PatternType: ACLPatternLiteral}, st.Ctime, err
	}
	typ, name, pt, err := DecodeExtendedACLChange(data)
	return ACLResource{Type: PascalResourceType(typ), Name: name, PatternType: strings.ToUpper(pt)}, st.Ctime, err
}

// DeleteACLChange deletes one notification; a missing one is fine.
func (c *Client) DeleteACLChange(patternType, node string) error {
	err := c.Delete(ACLChangesPath(patternType)+"/"+node, AnyVersion)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	return err
}

// JavaResourceType turns a Pascal-case resource type ("TransactionalId")
// into Java's enum name ("TRANSACTIONAL_ID"), the form change notifications
// carry.
func JavaResourceType(pascal string) string {
	var b strings.Builder
	for i, r := range pascal {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// PascalResourceType turns any spelling Kafka has written of a resource
// type ("TOPIC", "Topic", "TRANSACTIONAL_ID", "TransactionalId") into the
// Pascal-case path form. An unknown type is returned unchanged.
func PascalResourceType(s string) string {
	key := strings.ToUpper(strings.ReplaceAll(s, "_", ""))
	for _, p := range []string{"Topic", "Group", "Cluster", "TransactionalId", "DelegationToken"} {
		if strings.ToUpper(p) == key {
			return p
		}
	}
	return s
}
