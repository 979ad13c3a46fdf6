package zkutil

import (
	"errors"
	"strings"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper ACLs of the znodes Samsa creates (zookeeper.set.acl), as Kafka
// 2.8's ZkData.defaultAcls chooses them:
//
//	zookeeper.set.acl=false        world:anyone  cdrwa           (OPEN_ACL_UNSAFE) on every znode
//	zookeeper.set.acl=true         auth:         cdrwa           (CREATOR_ALL: the session's authenticated identity,
//	                                                              e.g. digest:broker:<hash> or sasl:broker)
//	                               + world:anyone r              (READ_ACL_UNSAFE), except below
//	  /config/users/..., /config/brokers/..., /delegation_token/tokens/...
//	                               auth: cdrwa only              (SCRAM credentials, dynamic broker passwords, tokens)
//	  /consumers                   world:anyone cdrwa            (old consumers write under it)
//
// Paths are chroot-relative. Only znodes created by this Client get these
// ACLs; a cluster switched to secure ACLs later needs
// zookeeper-security-migration (tools/zkmigrate: SecureRootPaths and
// SetDefaultACL below) for the existing ones.

// Credential is one ZooKeeper authentication added to the session
// (AddAuth): Scheme "digest" with Auth "user:password". go-zookeeper sends
// it again after every reconnect.
type Credential struct {
	Scheme string
	Auth   []byte
}

// ErrSecureACLsWithoutAuth: zookeeper.set.acl without an authenticated
// identity, which Kafka refuses at startup (CREATOR_ALL needs one).
var ErrSecureACLsWithoutAuth = errors.New("zkutil: zookeeper.set.acl is true, but the ZooKeeper session is not authenticated")

// sensitiveRootPaths are Kafka's ZkData.SensitiveRootPaths: never world-readable.
var sensitiveRootPaths = []string{configPath + "/" + ConfigTypeUser, configPath + "/" + ConfigTypeBroker, "/delegation_token/tokens"}

// SensitivePath reports whether path is under a sensitive root (Kafka
// ZkData.sensitivePath: a plain prefix test, as Kafka does).
func SensitivePath(path string) bool {
	for _, p := range sensitiveRootPaths {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// DefaultACL is Kafka's ZkData.defaultAcls(isSecure, path) for a
// chroot-relative path.
func DefaultACL(secure bool, path string) []zk.ACL {
	if !secure || path == consumersPath {
		return zk.WorldACL(zk.PermAll)
	}
	acls := zk.AuthACL(zk.PermAll)
	if !SensitivePath(path) {
		acls = append(acls, zk.WorldACL(zk.PermRead)...)
	}
	return acls
}

// aclFor is the ACL of a znode this Client creates at path.
func (c *Client) aclFor(path string) []zk.ACL { return DefaultACL(c.secure, path) }

// ZnodeACL is one entry of a znode's ACL: scheme, id and the permission
// bits (read 1, write 2, create 4, delete 8, admin 16).
type ZnodeACL struct {
	Scheme string
	ID     string
	Perms  int32
}

// Permission bits of ZnodeACL.Perms (ZooDefs.Perms).
const (
	PermRead   int32 = zk.PermRead
	PermWrite  int32 = zk.PermWrite
	PermCreate int32 = zk.PermCreate
	PermDelete int32 = zk.PermDelete
	PermAdmin  int32 = zk.PermAdmin
	PermAll    int32 = zk.PermAll
)

// GetACL returns path's ACL as ZooKeeper stores it (the auth scheme
// resolved to the creator's identity).
func (c *Client) GetACL(path string) ([]ZnodeACL, error) {
	if err := c.checkPath(path); err != nil {
		return nil, err
	}
	var acls []zk.ACL
	err := c.retry(func() (err error) {
		acls, _, err = c.conn.GetACL(c.abs(path))
		return err
	})
	if err != nil {
		return nil, translate(err, "getacl", path)
	}
	out := make([]ZnodeACL, len(acls))
	for i, a := range acls {
		out[i] = ZnodeACL{Scheme: a.Scheme, ID: a.ID, Perms: a.Perms}
	}
	return out, nil
}

// delegationTokenPath is Kafka's DelegationTokenAuthZNode; Samsa has no
// delegation tokens, but a migrated cluster's znodes may be there.
const delegationTokenPath = "/delegation_token"

// SecureRootPaths are Kafka 2.8's ZkData.SecureRootPaths, in its order:
// the trees zookeeper-security-migration walks to set every znode's ACL.
func SecureRootPaths() []string {
	return []string{adminPath, brokersPath, clusterPath, configPath, controllerPath, controllerEpochPath,
		isrChangeNotificationPath, latestProducerIDBlockPath, logDirEventNotificationPath, delegationTokenPath,
		aclExtendedPath, aclLiteralPath, aclLiteralChangesPath, ACLStorePath(ACLPatternPrefixed), aclExtendedChangesPath}
}

// SetDefaultACL replaces path's ACL, whatever its ACL version, with
// DefaultACL(secure, path): what Kafka's ZkSecurityMigrator does to each
// znode. Secure ACLs name the session's authenticated identities, so they
// need one (ZooKeeper answers INVALIDACL otherwise); changing an ACL needs
// the admin permission of the current one (ErrNoAuth).
func (c *Client) SetDefaultACL(path string, secure bool) error {
	if err := c.checkPath(path); err != nil {
		return err
	}
	acl := DefaultACL(secure, path)
	err := c.retry(func() error {
		_, err := c.conn.SetACL(c.abs(path), acl, -1)
		return err
	})
	if err != nil {
		return translate(err, "setacl", path)
	}
	return nil
}
