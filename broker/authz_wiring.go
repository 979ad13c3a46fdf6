package broker

import (
	"context"
	"fmt"

	"samsa/broker/acl"
)

// startAuthorizer creates and starts the ACL authorizer when
// authorizer.class.name names Kafka's AclAuthorizer (or its deprecated
// SimpleAclAuthorizer alias); config validation refuses any other class.
// It loads the ACL cache before the listeners open, so no request is ever
// judged against an empty cache. The ACLs live in the broker's own
// ZooKeeper (authorizer.zookeeper.* is not supported).
func (b *Broker) startAuthorizer(ctx context.Context) error {
	switch b.cfg.AuthorizerClassName {
	case "":
		return nil
	case acl.ClassAclAuthorizer, acl.ClassSimpleAclAuthorizer:
	default:
		return fmt.Errorf("broker: authorizer.class.name %q is not supported", b.cfg.AuthorizerClassName)
	}
	supers, err := acl.ParseSuperUsers(b.cfg.SuperUsers)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	a := acl.New(b.zk, acl.Config{SuperUsers: supers, AllowEveryoneIfNoACLFound: b.cfg.AllowEveryoneIfNoACLFound,
		Logger: b.opts.Logger.WithField("broker", b.ID())})
	if err := a.Start(ctx); err != nil {
		return fmt.Errorf("broker: start authorizer: %w", err)
	}
	b.authz = a
	return nil
}
