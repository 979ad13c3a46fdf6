package acls

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/IBM/sarama"

	"samsa/broker/acl"
	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// zkACLBackend is kafka-acls --authorizer-properties: the ZooKeeper store
// itself, as Kafka's AuthorizerService configures an AclAuthorizer.
type zkACLBackend struct {
	zk    *zkutil.Client
	store *acl.Store
}

func newZKACLBackend(props []string, tlsFile string, env tool.Env) (*zkACLBackend, error) {
	kv, err := tool.ParsePropertyArgs(props)
	if err != nil {
		return nil, err
	}
	if tlsFile != "" {
		// Kafka loads the file's keys with and without "authorizer." and
		// merges them over the command line's.
		fileProps, err := tool.ReadZKTLSFile(tlsFile, "authorizer.")
		if err != nil {
			return nil, err
		}
		maps.Copy(kv, fileProps)
	}
	connect := authorizerProp(kv, "zookeeper.connect")
	if connect == "" {
		return nil, tool.Error("Missing required argument \"[authorizer-properties]\": zookeeper.connect")
	}
	sec := tool.ZKSecurity{TLSProps: map[string]string{}, Hint: "--authorizer-properties or --zk-tls-config-file"}
	for _, k := range tool.ZKTLSKeys {
		if v := authorizerProp(kv, k); v != "" {
			sec.TLSProps[k] = v
		}
	}
	if v, ok := kv["zookeeper.set.acl"]; ok {
		b := strings.EqualFold(strings.TrimSpace(v), "true")
		sec.SetACL = &b
	}
	zk, err := tool.ConnectZK(env, "kafka-acls", connect, sec)
	if err != nil {
		return nil, err
	}
	return &zkACLBackend{zk: zk, store: acl.NewStore(zk)}, nil
}

// authorizerProp is AclAuthorizer's lookup of a ZooKeeper client key:
// authorizer.<key> first, then <key>.
func authorizerProp(kv map[string]string, key string) string {
	if v, ok := kv["authorizer."+key]; ok {
		return v
	}
	return kv[key]
}

func (z *zkACLBackend) create(bindings []acl.Binding) []error {
	errs, _ := z.store.Create(bindings)
	return errs
}

func (z *zkACLBackend) list(f acl.Filter) ([]acl.Binding, error) { return z.store.List(f) }

func (z *zkACLBackend) remove(f acl.Filter) ([]error, error) {
	all, err := z.store.List(acl.Filter{Type: acl.ResourceAny, Pattern: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny})
	if err != nil {
		return nil, err
	}
	var known []acl.Resource
	seen := map[acl.Resource]bool{}
	for _, b := range all {
		if !seen[b.Resource] {
			seen[b.Resource] = true
			known = append(known, b.Resource)
		}
	}
	out, _ := z.store.Delete([]acl.Filter{f}, known)
	var errs []error
	for _, d := range out[0] {
		errs = append(errs, d.Err)
	}
	return errs, nil
}

func (z *zkACLBackend) close() { z.zk.Close() }

// adminACLBackend is kafka-acls --bootstrap-server: the ACL APIs.
type adminACLBackend struct {
	admin sarama.ClusterAdmin
}

func newAdminACLBackend(bootstrap, commandConfig string) (*adminACLBackend, error) {
	cfg, err := tool.NewSaramaConfig("samsa-kafka-acls", commandConfig, nil)
	if err != nil {
		return nil, err
	}
	admin, err := sarama.NewClusterAdmin(tool.SplitList(bootstrap), cfg)
	if err != nil {
		return nil, err
	}
	return &adminACLBackend{admin: admin}, nil
}

// aclAPIError words a broker's answer as the Java admin client's exception.
func aclAPIError(err error) error {
	var ke sarama.KError
	if errors.As(err, &ke) {
		switch ke {
		case sarama.ErrSecurityDisabled:
			return fmt.Errorf("org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker")
		case sarama.ErrClusterAuthorizationFailed:
			return fmt.Errorf("org.apache.kafka.common.errors.ClusterAuthorizationException: Cluster authorization failed.")
		}
	}
	return err
}

// create sends CreateAcls to the controller itself: Sarama's
// ClusterAdmin.CreateACLs drops the per-binding results.
func (a *adminACLBackend) create(bindings []acl.Binding) []error {
	errs := make([]error, len(bindings))
	req := &sarama.CreateAclsRequest{Version: 1}
	for _, b := range bindings {
		r := b.Resource
		req.AclCreations = append(req.AclCreations, &sarama.AclCreation{
			Resource: sarama.Resource{ResourceType: sarama.AclResourceType(r.Type), ResourceName: r.Name,
				ResourcePatternType: sarama.AclResourcePatternType(r.Pattern)},
			Acl: sarama.Acl{Principal: b.Entry.Principal.String(), Host: b.Entry.Host,
				Operation: sarama.AclOperation(b.Entry.Operation), PermissionType: sarama.AclPermissionType(b.Entry.Permission)}})
	}
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = aclAPIError(err)
		}
		return errs
	}
	br, err := a.admin.Controller()
	if err != nil {
		return fail(err)
	}
	resp, err := br.CreateAcls(req)
	if err != nil {
		return fail(err)
	}
	for i, cr := range resp.AclCreationResponses {
		if i < len(errs) && cr.Err != sarama.ErrNoError {
			errs[i] = aclAPIError(cr.Err)
			if cr.ErrMsg != nil && cr.Err != sarama.ErrSecurityDisabled && cr.Err != sarama.ErrClusterAuthorizationFailed {
				errs[i] = errors.New(*cr.ErrMsg)
			}
		}
	}
	return errs
}

func saramaFilter(f acl.Filter) sarama.AclFilter {
	return sarama.AclFilter{Version: 1, ResourceType: sarama.AclResourceType(f.Type), ResourceName: f.Name,
		ResourcePatternTypeFilter: sarama.AclResourcePatternType(f.Pattern), Principal: f.Principal, Host: f.Host,
		Operation: sarama.AclOperation(f.Operation), PermissionType: sarama.AclPermissionType(f.Permission)}
}

func (a *adminACLBackend) list(f acl.Filter) ([]acl.Binding, error) {
	ras, err := a.admin.ListAcls(saramaFilter(f))
	if err != nil {
		return nil, aclAPIError(err)
	}
	var out []acl.Binding
	for _, ra := range ras {
		r := acl.Resource{Type: acl.ResourceType(ra.ResourceType), Name: ra.ResourceName, Pattern: acl.PatternType(ra.ResourcePatternType)}
		for _, x := range ra.Acls {
			p, err := acl.ParsePrincipal(x.Principal)
			if err != nil {
				continue
			}
			out = append(out, acl.Binding{Resource: r, Entry: acl.Entry{Principal: p, Host: x.Host,
				Operation: acl.Operation(x.Operation), Permission: acl.Permission(x.PermissionType)}})
		}
	}
	return out, nil
}

func (a *adminACLBackend) remove(f acl.Filter) ([]error, error) {
	ms, err := a.admin.DeleteACL(saramaFilter(f), false)
	if err != nil {
		return nil, aclAPIError(err)
	}
	var errs []error
	for _, m := range ms {
		if m.Err != sarama.ErrNoError {
			msg := m.Err.Error()
			if m.ErrMsg != nil {
				msg = strings.TrimSpace(*m.ErrMsg)
			}
			errs = append(errs, errors.New(msg))
		}
	}
	return errs, nil
}

func (a *adminACLBackend) close() { _ = a.admin.Close() }
