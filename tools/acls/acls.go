package acls

// kafka-acls: Kafka 2.8's AclCommand. Two back ends, as in Kafka:
//   - --authorizer-properties zookeeper.connect=H:P[/chroot]: reads and
//     writes the ACL znodes directly (the AclAuthorizer's own store,
//     broker/acl.Store), then writes the change notification every broker
//     applies;
//   - --bootstrap-server H:P [--command-config f]: CreateAcls, DescribeAcls
//     and DeleteAcls through a broker.
//
// Output, exactly as Kafka's (note the space before the first TAB and
// before the closing newline):
//
//	Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:
//	 	(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
//
//	Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:
//	 	(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
//
// Resources print sorted by type, pattern and name, entries as stored
// (Kafka prints hash-set order). --authorizer classes other than Kafka's
// AclAuthorizer are refused.
//
// ZooKeeper security, as AclAuthorizer configures its client: TLS from the
// zookeeper.ssl.* keys of --authorizer-properties (authorizer.zookeeper.ssl.*
// wins) and of --zk-tls-config-file (which wins over both, as Kafka merges
// it last); the digest identity of the JAAS Client section in KAFKA_OPTS;
// zookeeper.set.acl defaults to true when that section exists.

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"samsa/broker/acl"
	"samsa/tools/internal/tool"
)

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-acls",
		Usage: "This tool helps to manage acls on kafka.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "A list of host/port pairs to use for establishing the connection to the Kafka cluster."},
			&cli.StringFlag{Name: "command-config", Usage: "A property file containing configs to be passed to Admin Client (only with --bootstrap-server)."},
			&cli.StringFlag{Name: "authorizer", Usage: "Fully qualified class name of the authorizer (default kafka.security.authorizer.AclAuthorizer)."},
			&cli.StringSliceFlag{Name: "authorizer-properties", Usage: "key=val pairs passed to the authorizer; zookeeper.connect=host:port is required."},
			&cli.StringFlag{Name: "zk-tls-config-file", Usage: "DEPRECATED: Identifies the file where ZooKeeper client TLS connectivity properties are defined for the default authorizer kafka.security.authorizer.AclAuthorizer. Any properties other than zookeeper.ssl.* and zookeeper.clientCnxnSocket (with or without an \"authorizer.\" prefix) are ignored."},
			&cli.BoolFlag{Name: "add", Usage: "Indicates you are trying to add ACLs."},
			&cli.BoolFlag{Name: "remove", Usage: "Indicates you are trying to remove ACLs."},
			&cli.BoolFlag{Name: "list", Usage: "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource."},
			&cli.BoolFlag{Name: "force", Usage: "Assume Yes to all queries and do not prompt."},
			&cli.StringSliceFlag{Name: "topic", Usage: "topic to which ACLs should be added or removed; '*' means all topics."},
			&cli.BoolFlag{Name: "cluster", Usage: "Add/Remove cluster ACLs."},
			&cli.StringSliceFlag{Name: "group", Usage: "Consumer Group to which the ACLs should be added or removed; '*' means all groups."},
			&cli.StringSliceFlag{Name: "transactional-id", Usage: "The transactionalId to which ACLs should be added or removed; '*' means all."},
			&cli.StringSliceFlag{Name: "delegation-token", Usage: "Delegation token to which ACLs should be added or removed."},
			&cli.StringFlag{Name: "resource-pattern-type", Value: "literal", Usage: "ANY|MATCH|LITERAL|PREFIXED (add: LITERAL or PREFIXED)."},
			&cli.StringSliceFlag{Name: "allow-principal", Usage: "principal in PrincipalType:name format; User:* is the wildcard."},
			&cli.StringSliceFlag{Name: "deny-principal", Usage: "principal in PrincipalType:name format to deny."},
			&cli.StringSliceFlag{Name: "principal", Usage: "List ACLs for the specified principal (with --list)."},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "Host from which the allowed principals may access (default *)."},
			&cli.StringSliceFlag{Name: "deny-host", Usage: "Host from which the denied principals may not access (default *)."},
			&cli.StringSliceFlag{Name: "operation", Usage: "Operation that is being allowed or denied (default All)."},
			&cli.BoolFlag{Name: "producer", Usage: "Convenience option: WRITE, DESCRIBE and CREATE on topic."},
			&cli.BoolFlag{Name: "consumer", Usage: "Convenience option: READ, DESCRIBE on topic and READ on group."},
			&cli.BoolFlag{Name: "idempotent", Usage: "Enable idempotence for the producer (with --producer)."},
		},
		Action: tool.ErrorExitAction(env, runAcls),
	}
}

// aclBackend is where kafka-acls reads and writes ACLs.
type aclBackend interface {
	create(bindings []acl.Binding) []error
	list(f acl.Filter) ([]acl.Binding, error)
	remove(f acl.Filter) ([]error, error)
	close()
}

func runAcls(c *cli.Context, env tool.Env) error {
	if err := checkAclsArgs(c); err != nil {
		return err
	}
	var be aclBackend
	var err error
	if c.IsSet("bootstrap-server") {
		be, err = newAdminACLBackend(c.String("bootstrap-server"), c.String("command-config"))
	} else {
		be, err = newZKACLBackend(c.StringSlice("authorizer-properties"), c.String("zk-tls-config-file"), env)
	}
	if err != nil {
		return err
	}
	defer be.close()
	out := env.Stdout
	var runErr error
	switch {
	case c.Bool("add"):
		runErr = addAcls(c, be, out)
	case c.Bool("remove"):
		runErr = removeAcls(c, be, env)
	default:
		runErr = listAcls(c, be, out)
	}
	if runErr != nil {
		fmt.Fprintf(out, "Error while executing ACL command: %v\n", runErr)
		return tool.ExitError{Code: 1}
	}
	return nil
}

// checkAclsArgs is AclCommandOptions.checkArgs.
func checkAclsArgs(c *cli.Context) error {
	has := c.IsSet
	die := func(msg string) error { return tool.Error(msg) }
	switch {
	case has("bootstrap-server") && has("authorizer"):
		return die("Only one of --bootstrap-server or --authorizer must be specified")
	case !has("bootstrap-server") && !has("authorizer-properties"):
		return die("Missing required argument \"[authorizer-properties]\"")
	case has("command-config") && !has("bootstrap-server"):
		return die("The --command-config option can only be used with --bootstrap-server option")
	case has("authorizer-properties") && has("bootstrap-server"):
		return die("The --authorizer-properties option can only be used with --authorizer option")
	case has("authorizer") && c.String("authorizer") != acl.ClassAclAuthorizer && c.String("authorizer") != acl.ClassSimpleAclAuthorizer:
		return die("Samsa supports only the authorizer " + acl.ClassAclAuthorizer)
	}
	actions := 0
	for _, a := range []string{"list", "add", "remove"} {
		if c.Bool(a) {
			actions++
		}
	}
	if actions != 1 {
		return die("Command must include exactly one action: --list, --add, --remove. ")
	}
	if c.Bool("list") {
		for _, o := range []string{"producer", "consumer", "allow-host", "allow-principal", "deny-host", "deny-principal"} {
			if has(o) {
				return die(fmt.Sprintf("Option \"[list]\" can't be used with option \"[%s]\"", o))
			}
		}
	}
	for _, role := range []string{"producer", "consumer"} {
		if !c.Bool(role) {
			continue
		}
		for _, o := range []string{"operation", "deny-principal", "deny-host"} {
			if has(o) {
				return die(fmt.Sprintf("Option \"[%s]\" can't be used with option \"[%s]\"", role, o))
			}
		}
	}
	switch {
	case has("principal") && !c.Bool("list"):
		return die("The --principal option is only available if --list is set")
	case c.Bool("producer") && !has("topic"):
		return die("With --producer you must specify a --topic")
	case c.Bool("idempotent") && !c.Bool("producer"):
		return die("The --idempotent option is only available if --producer is set")
	case c.Bool("consumer") && (!has("topic") || !has("group") || (!c.Bool("producer") && (c.Bool("cluster") || has("transactional-id")))):
		return die("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.")
	}
	if acl.ParsePatternType(c.String("resource-pattern-type")) == acl.PatternUnknown {
		return die("Unknown resource-pattern-type: " + c.String("resource-pattern-type"))
	}
	return nil
}

// resourceFilters is AclCommand.getResourceFilter: one filter per named
// resource, with the --resource-pattern-type.
func resourceFilters(c *cli.Context) []acl.Filter {
	pt := acl.ParsePatternType(c.String("resource-pattern-type"))
	var out []acl.Filter
	add := func(t acl.ResourceType, name string) {
		n := strings.TrimSpace(name)
		out = append(out, acl.Filter{Type: t, Name: &n, Pattern: pt, Operation: acl.OpAny, Permission: acl.PermissionAny})
	}
	for _, tp := range c.StringSlice("topic") {
		add(acl.ResourceTopic, tp)
	}
	if pt == acl.PatternLiteral && (c.Bool("cluster") || c.Bool("idempotent")) {
		add(acl.ResourceCluster, acl.ClusterName)
	}
	for _, g := range c.StringSlice("group") {
		add(acl.ResourceGroup, g)
	}
	for _, x := range c.StringSlice("transactional-id") {
		add(acl.ResourceTransactionalID, x)
	}
	for _, d := range c.StringSlice("delegation-token") {
		add(acl.ResourceDelegationToken, d)
	}
	return out
}

// aclEntries is AclCommand.getAcl: every allowed principal × operation ×
// allowed host as Allow, and likewise for the denied ones; hosts default to
// "*" when a principal is given.
func aclEntries(c *cli.Context, ops []acl.Operation) ([]acl.Entry, error) {
	var out []acl.Entry
	for _, side := range []struct {
		principals, hosts string
		perm              acl.Permission
	}{{"allow-principal", "allow-host", acl.Allow}, {"deny-principal", "deny-host", acl.Deny}} {
		hosts := c.StringSlice(side.hosts)
		if len(hosts) == 0 {
			hosts = []string{acl.Wildcard}
		}
		for _, ps := range c.StringSlice(side.principals) {
			p, err := acl.ParsePrincipal(strings.TrimSpace(ps))
			if err != nil {
				return nil, tool.Error(strings.TrimPrefix(err.Error(), acl.ErrInvalidBinding.Error()+": "))
			}
			for _, op := range ops {
				for _, h := range hosts {
					e := acl.Entry{Principal: p, Host: strings.TrimSpace(h), Operation: op, Permission: side.perm}
					if !containsEntry(out, e) {
						out = append(out, e)
					}
				}
			}
		}
	}
	return out, nil
}

func containsEntry(es []acl.Entry, e acl.Entry) bool {
	for _, x := range es {
		if x == e {
			return true
		}
	}
	return false
}

// resourceEntries is AclCommand.getResourceFilterToAcls: the entries per
// named resource, from --operation or from --producer / --consumer.
func resourceEntries(c *cli.Context) ([]acl.Filter, [][]acl.Entry, error) {
	var filters []acl.Filter
	var entries [][]acl.Entry
	put := func(f acl.Filter, es []acl.Entry) {
		for i, g := range filters {
			if g.Type == f.Type && *g.Name == *f.Name && g.Pattern == f.Pattern {
				for _, e := range es {
					if !containsEntry(entries[i], e) {
						entries[i] = append(entries[i], e)
					}
				}
				return
			}
		}
		filters, entries = append(filters, f), append(entries, es)
	}
	role := c.Bool("producer") || c.Bool("consumer")
	for _, f := range resourceFilters(c) {
		var ops []acl.Operation
		switch {
		case !role:
			for _, o := range c.StringSlice("operation") {
				ops = append(ops, acl.ParseOperation(strings.TrimSpace(o)))
			}
			if len(ops) == 0 {
				ops = []acl.Operation{acl.OpAll}
			}
		default:
			if c.Bool("producer") {
				switch f.Type {
				case acl.ResourceTopic:
					ops = append(ops, acl.OpWrite, acl.OpDescribe, acl.OpCreate)
				case acl.ResourceTransactionalID:
					ops = append(ops, acl.OpWrite, acl.OpDescribe)
				case acl.ResourceCluster:
					if c.Bool("idempotent") {
						ops = append(ops, acl.OpIdempotentWrite)
					}
				}
			}
			if c.Bool("consumer") {
				switch f.Type {
				case acl.ResourceTopic:
					ops = append(ops, acl.OpRead, acl.OpDescribe)
				case acl.ResourceGroup:
					ops = append(ops, acl.OpRead)
				}
			}
			if len(ops) == 0 {
				continue
			}
		}
		es, err := aclEntries(c, ops)
		if err != nil {
			return nil, nil, err
		}
		if err := validateACLOperations(f.Type, es); err != nil {
			return nil, nil, err
		}
		put(f, es)
	}
	return filters, entries, nil
}

// validateACLOperations is AclCommand.validateOperation.
func validateACLOperations(t acl.ResourceType, es []acl.Entry) error {
	valid := append([]acl.Operation{acl.OpAll}, acl.SupportedOperations(t)...)
	for _, e := range es {
		ok := false
		for _, v := range valid {
			ok = ok || v == e.Operation
		}
		if !ok {
			names := make([]string, len(valid))
			for i, v := range valid {
				names[i] = v.String()
			}
			return tool.Errorf("ResourceType %s only supports operations %s", t, strings.Join(names, ","))
		}
	}
	return nil
}

func printACLBlock(out io.Writer, header string, r acl.Resource, es []acl.Entry) {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = "\t" + e.String()
	}
	fmt.Fprintf(out, "%s `%s`: \n %s \n\n", header, r, strings.Join(lines, "\n"))
}

func addAcls(c *cli.Context, be aclBackend, out io.Writer) error {
	if pt := acl.ParsePatternType(c.String("resource-pattern-type")); pt != acl.PatternLiteral && pt != acl.PatternPrefixed {
		return tool.Errorf("A '--resource-pattern-type' value of '%s' is not valid when adding acls.", pt)
	}
	filters, entries, err := resourceEntries(c)
	if err != nil {
		return err
	}
	if len(filters) == 0 {
		return tool.Error("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>")
	}
	for _, es := range entries {
		if len(es) == 0 {
			return tool.Error("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
		}
	}
	for i, f := range filters {
		r := acl.Resource{Type: f.Type, Name: *f.Name, Pattern: f.Pattern}
		printACLBlock(out, "Adding ACLs for resource", r, entries[i])
		bindings := make([]acl.Binding, len(entries[i]))
		for j, e := range entries[i] {
			bindings[j] = acl.Binding{Resource: r, Entry: e}
		}
		for _, err := range be.create(bindings) {
			if err != nil {
				fmt.Fprintf(out, "Error while adding ACLs: %v\n", err)
			}
		}
	}
	return listAcls(c, be, out)
}

func removeAcls(c *cli.Context, be aclBackend, env tool.Env) error {
	filters, entries, err := resourceEntries(c)
	if err != nil {
		return err
	}
	if len(filters) == 0 {
		return tool.Error("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>")
	}
	in := bufio.NewReader(env.Stdin)
	confirm := func(msg string) bool {
		if c.Bool("force") {
			return true
		}
		fmt.Fprintln(env.Stdout, msg)
		line, _ := in.ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "y")
	}
	report := func(errs []error, err error) {
		if err != nil {
			errs = append(errs, err)
		}
		for _, e := range errs {
			if e != nil {
				fmt.Fprintf(env.Stdout, "Error while removing ACLs: %v\n", e)
			}
		}
	}
	for i, f := range filters {
		fs := fmt.Sprintf("ResourcePatternFilter(resourceType=%s, name=%s, patternType=%s)", f.Type, *f.Name, f.Pattern)
		es := entries[i]
		if len(c.StringSlice("allow-principal")) == 0 && len(c.StringSlice("deny-principal")) == 0 {
			if confirm(fmt.Sprintf("Are you sure you want to delete all ACLs for resource filter `%s`? (y/n)", fs)) {
				report(be.remove(f))
			}
			continue
		}
		lines := make([]string, len(es))
		for j, e := range es {
			lines[j] = "\t" + e.String()
		}
		if !confirm(fmt.Sprintf("Are you sure you want to remove ACLs: \n %s \n from resource filter `%s`? (y/n)", strings.Join(lines, "\n"), fs)) {
			continue
		}
		for _, e := range es {
			ef := f
			p, h := e.Principal.String(), e.Host
			ef.Principal, ef.Host, ef.Operation, ef.Permission = &p, &h, e.Operation, e.Permission
			report(be.remove(ef))
		}
	}
	return listAcls(c, be, env.Stdout)
}

func listAcls(c *cli.Context, be aclBackend, out io.Writer) error {
	filters := resourceFilters(c)
	if len(filters) == 0 {
		filters = []acl.Filter{{Type: acl.ResourceAny, Pattern: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny}}
	}
	var order []acl.Resource
	byRes := map[acl.Resource][]acl.Entry{}
	for _, f := range filters {
		bs, err := be.list(f)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if _, ok := byRes[b.Resource]; !ok {
				order = append(order, b.Resource)
			}
			if !containsEntry(byRes[b.Resource], b.Entry) {
				byRes[b.Resource] = append(byRes[b.Resource], b.Entry)
			}
		}
	}
	principals := c.StringSlice("principal")
	if len(principals) == 0 {
		for _, r := range order {
			printACLBlock(out, "Current ACLs for resource", r, byRes[r])
		}
		return nil
	}
	for _, ps := range principals {
		p, err := acl.ParsePrincipal(strings.TrimSpace(ps))
		if err != nil {
			return tool.Error(err.Error())
		}
		fmt.Fprintf(out, "ACLs for principal `%s`\n", p)
		for _, r := range order {
			var mine []acl.Entry
			for _, e := range byRes[r] {
				if e.Principal == p {
					mine = append(mine, e)
				}
			}
			if len(mine) > 0 {
				printACLBlock(out, "Current ACLs for resource", r, mine)
			}
		}
	}
	return nil
}
