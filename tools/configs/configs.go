package configs

// kafka-configs: describe and alter dynamic configs of topics, brokers,
// users, clients and ips (Kafka 2.8 ConfigCommand).
//
// Behaviour:
//   - exactly one of --zookeeper (znodes /config/<type>/<name> through
//     zkutil, plus a /config/changes notification so running brokers apply
//     the change; Kafka's deprecation warning first) or --bootstrap-server
//     (Admin API through Sarama: DescribeConfigs, IncrementalAlterConfigs,
//     DescribeClientQuotas, AlterClientQuotas);
//   - the entity: --entity-type topics|brokers|users|clients|ips|broker-loggers with
//     --entity-name N or --entity-default, or the shorthands --topic,
//     --broker, --broker-defaults, --user, --user-defaults, --client,
//     --client-defaults, --ip, --ip-defaults (ips: KIP-612's
//     connection_creation_rate, an INT from 0, the name an IP or a host that
//     resolves); --describe without a name describes every entity
//     of the type; broker-loggers (bootstrap only) are configs_loggers.go;
//   - --add-config k1=v1,k2=[a,b] (commas inside brackets belong to the
//     value), --add-config-file F (properties), --delete-config k1,k2 (each
//     must exist: "Invalid config(s): k"); values are validated before
//     anything is written (topic keys, dynamic broker keys, quota keys);
//   - output is Kafka 2.8's: configs_zk.go and configs_admin.go give the
//     lines.

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"samsa/config"
	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// configEntity names what kafka-configs acts on.
type configEntity struct {
	typ       string // zkutil.ConfigType*: topics, brokers, users, clients
	name      string // "" with isDefault, or for "every entity" on describe
	isDefault bool
}

// zkName is the entity's znode name: "<default>", or the name sanitised as
// Kafka's Sanitizer does for users and clients.
func (e configEntity) zkName() string {
	if e.isDefault {
		return "<default>"
	}
	if e.typ == zkutil.ConfigTypeUser || e.typ == zkutil.ConfigTypeClient {
		return sanitizeEntityName(e.name)
	}
	return e.name
}

// String is Kafka's ConfigCommand.Entity.toString: "topic 't'", "brokers
// '1'", "default brokers", "user-principal 'u'", "default client-id".
func (e configEntity) String() string {
	typeName := e.typ
	switch e.typ {
	case zkutil.ConfigTypeUser:
		typeName = "user-principal"
	case zkutil.ConfigTypeClient:
		typeName = "client-id"
	case zkutil.ConfigTypeTopic:
		typeName = "topic"
	}
	if e.isDefault {
		return "default " + typeName
	}
	return typeName + " '" + e.name + "'"
}

// sanitizeEntityName is Kafka's Sanitizer.sanitize (zkutil.Sanitize, the
// one the broker uses too).
func sanitizeEntityName(s string) string { return zkutil.Sanitize(s) }

// desanitizeEntityName reverses sanitizeEntityName.
func desanitizeEntityName(s string) string { return zkutil.Desanitize(s) }

type configsOpts struct {
	zookeeper, bootstrap, commandConfig string
	zkTLSFile                           string // --zk-tls-config-file
	entity                              configEntity
	describe, alter, all                bool
	add                                 map[string]string
	del                                 []string
}

var configEntityTypes = []string{zkutil.ConfigTypeTopic, zkutil.ConfigTypeClient, zkutil.ConfigTypeUser, zkutil.ConfigTypeBroker, zkutil.ConfigTypeIP}

func Command(env tool.Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-configs",
		Usage: "describe or alter dynamic configs of topics, brokers, users and clients",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "zookeeper", Usage: "DEPRECATED: ZooKeeper connection string host:port[/chroot]"},
			&cli.StringFlag{Name: "zk-tls-config-file", Usage: "Identifies the file where ZooKeeper client TLS connectivity properties are defined (zookeeper.ssl.*, zookeeper.clientCnxnSocket); any other properties are ignored."},
			&cli.StringFlag{Name: "bootstrap-server", Usage: "broker(s) to connect to, host:port[,host:port]"},
			&cli.StringFlag{Name: "command-config", Usage: "properties file with Admin client settings"},
			&cli.StringFlag{Name: "entity-type", Usage: "topics, brokers, users, clients, ips or broker-loggers"},
			&cli.StringFlag{Name: "entity-name", Usage: "name of the entity (topic name, broker id, user principal, client id)"},
			&cli.BoolFlag{Name: "entity-default", Usage: "the default entity (brokers, users, clients)"},
			&cli.StringFlag{Name: "topic", Usage: "same as --entity-type topics --entity-name <topic>"},
			&cli.StringFlag{Name: "broker", Usage: "same as --entity-type brokers --entity-name <id>"},
			&cli.BoolFlag{Name: "broker-defaults", Usage: "same as --entity-type brokers --entity-default"},
			&cli.StringFlag{Name: "broker-logger", Usage: "same as --entity-type broker-loggers --entity-name <id>"},
			&cli.StringFlag{Name: "user", Usage: "same as --entity-type users --entity-name <user>"},
			&cli.BoolFlag{Name: "user-defaults", Usage: "same as --entity-type users --entity-default"},
			&cli.StringFlag{Name: "client", Usage: "same as --entity-type clients --entity-name <client id>"},
			&cli.BoolFlag{Name: "client-defaults", Usage: "same as --entity-type clients --entity-default"},
			&cli.StringFlag{Name: "ip", Usage: "same as --entity-type ips --entity-name <ip>"},
			&cli.BoolFlag{Name: "ip-defaults", Usage: "same as --entity-type ips --entity-default"},
			&cli.BoolFlag{Name: "describe", Usage: "list the configs of the entity"},
			&cli.BoolFlag{Name: "alter", Usage: "change the configs of the entity"},
			&cli.BoolFlag{Name: "all", Usage: "with --describe --bootstrap-server: every config, not only the dynamic ones"},
			&cli.StringFlag{Name: "add-config", Usage: "k1=v1,k2=[v1,v2,v2],k3=v3"},
			&cli.StringFlag{Name: "add-config-file", Usage: "properties file of configs to add"},
			&cli.StringSliceFlag{Name: "delete-config", Usage: "k1,k2 (repeatable)"},
			&cli.BoolFlag{Name: "force", Usage: "accepted and ignored, as Kafka"},
		},
		Action: func(c *cli.Context) error {
			o, err := parseConfigsOpts(c)
			if err == nil {
				err = runConfigs(o, env)
			}
			if err != nil {
				var te tool.Error
				if !errors.As(err, &te) {
					fmt.Fprintf(env.Stderr, "Error while executing config command with args '%s'\n", commandArgs(c))
				}
				fmt.Fprintln(env.Stderr, tool.UserMessage(err))
				return tool.ExitError{Code: 1}
			}
			return nil
		},
	}
}

// commandArgs rebuilds the command line from the flags that were set (in
// name order), for Kafka's "Error while executing ... with args" line.
func commandArgs(c *cli.Context) string {
	var parts []string
	for _, n := range c.LocalFlagNames() {
		switch v := c.Value(n).(type) {
		case bool:
			parts = append(parts, "--"+n)
		case cli.StringSlice:
			for _, s := range v.Value() {
				parts = append(parts, "--"+n, s)
			}
		default:
			parts = append(parts, "--"+n, fmt.Sprint(v))
		}
	}
	return strings.Join(append(parts, c.Args().Slice()...), " ")
}

// parseConfigEntity reads the entity options (Kafka's checkArgs rules).
func parseConfigEntity(c *cli.Context) (configEntity, error) {
	var types []string
	e := configEntity{typ: c.String("entity-type"), name: c.String("entity-name"), isDefault: c.Bool("entity-default")}
	if e.typ != "" {
		types = append(types, e.typ)
	}
	for _, s := range []struct{ flag, def, typ string }{
		{"topic", "", zkutil.ConfigTypeTopic},
		{"broker", "broker-defaults", zkutil.ConfigTypeBroker},
		{"broker-logger", "", brokerLoggersType},
		{"user", "user-defaults", zkutil.ConfigTypeUser},
		{"client", "client-defaults", zkutil.ConfigTypeClient},
		{"ip", "ip-defaults", zkutil.ConfigTypeIP},
	} {
		if v := c.String(s.flag); v != "" {
			types = append(types, s.typ)
			e.typ, e.name = s.typ, v
		}
		if s.def != "" && c.Bool(s.def) {
			types = append(types, s.typ)
			e.typ, e.isDefault = s.typ, true
		}
	}
	switch {
	case len(types) == 0:
		return e, tool.Error("At least one entity type must be specified")
	case len(types) > 1:
		return e, tool.Error("Samsa's kafka-configs takes exactly one entity (users and clients together are not supported)")
	}
	allowed := configEntityTypes
	if c.String("bootstrap-server") != "" {
		allowed = append(slices.Clone(allowed), brokerLoggersType) // Kafka's BrokerSupportedConfigTypes
	}
	if !slices.Contains(allowed, e.typ) {
		return e, tool.Errorf("Invalid entity type %s, the entity type must be one of %s", e.typ, strings.Join(allowed, ", "))
	}
	if e.isDefault && e.typ == brokerLoggersType {
		return e, tool.Errorf("--entity-default is not allowed for %s", brokerLoggersType)
	}
	if e.isDefault && e.name != "" {
		return e, tool.Error("--entity-name and --entity-default cannot be used together")
	}
	if e.isDefault && e.typ == zkutil.ConfigTypeTopic {
		return e, tool.Error("--entity-default is not allowed for topics")
	}
	if e.typ == zkutil.ConfigTypeIP && e.name != "" && net.ParseIP(e.name) == nil {
		if _, err := net.LookupHost(e.name); err != nil {
			return e, tool.Errorf("The entity name for %s must be a valid IP or resolvable host, but it is: %s", e.typ, e.name)
		}
	}
	if (e.typ == zkutil.ConfigTypeBroker || e.typ == brokerLoggersType) && e.name != "" {
		if _, err := strconv.ParseInt(e.name, 10, 32); err != nil {
			return e, tool.Errorf("The entity name for %s must be a valid integer broker id, but it is: %s", e.typ, e.name)
		}
	}
	return e, nil
}

func parseConfigsOpts(c *cli.Context) (*configsOpts, error) {
	o := &configsOpts{zookeeper: c.String("zookeeper"), bootstrap: c.String("bootstrap-server"), commandConfig: c.String("command-config"),
		describe: c.Bool("describe"), alter: c.Bool("alter"), all: c.Bool("all"), zkTLSFile: c.String("zk-tls-config-file")}
	if (o.zookeeper == "") == (o.bootstrap == "") {
		return nil, tool.Error("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	if c.IsSet("zk-tls-config-file") && o.zookeeper == "" {
		return nil, tool.Error("Only the --zookeeper option can be used with the --zk-tls-config-file option.")
	}
	if o.describe == o.alter {
		return nil, tool.Error("Command must include exactly one action: --describe, --alter")
	}
	var err error
	if o.entity, err = parseConfigEntity(c); err != nil {
		return nil, err
	}
	if o.describe && o.entity.typ == brokerLoggersType && o.entity.name == "" {
		return nil, tool.Errorf("an entity name must be specified with --describe of %s", brokerLoggersType)
	}
	if o.alter && o.entity.name == "" && !o.entity.isDefault {
		if o.entity.typ == zkutil.ConfigTypeTopic || o.entity.typ == brokerLoggersType {
			return nil, tool.Errorf("an entity name must be specified with --alter of %s", o.entity.typ)
		}
		return nil, tool.Error("an entity-name or default entity must be specified with --alter of users, clients, brokers or ips")
	}
	if o.add, err = parseAddConfig(c.String("add-config")); err != nil {
		return nil, err
	}
	if f := c.String("add-config-file"); f != "" {
		props, err := config.ReadPropertiesFile(f)
		if err != nil {
			return nil, tool.Error(tool.UserMessage(err))
		}
		maps.Copy(o.add, props)
	}
	for _, d := range c.StringSlice("delete-config") {
		o.del = append(o.del, tool.SplitList(d)...)
	}
	if o.alter && len(o.add) == 0 && len(o.del) == 0 {
		return nil, tool.Error("At least one of --add-config or --delete-config must be specified with --alter")
	}
	if o.describe && (len(o.add) > 0 || len(o.del) > 0) {
		return nil, tool.Error("Option \"[add-config]\" can't be used with option \"[describe]\"")
	}
	if o.all && (!o.describe || o.bootstrap == "") {
		return nil, tool.Error("Option \"[all]\" can only be used with --describe and --bootstrap-server")
	}
	return o, nil
}

var configKeyRE = regexp.MustCompile(`^[a-zA-Z0-9._-]*$`)

// parseAddConfig parses --add-config: pairs split on commas that are not
// inside [...], key and value split on the first '=', brackets removed
// from the value (Kafka's ConfigCommand.parseConfigsToBeAdded).
func parseAddConfig(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, s[start:])
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, tool.Error("Invalid entity config: all configs to be added must be in the format \"key=val\".")
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(v))
		if !configKeyRE.MatchString(k) {
			return nil, tool.Errorf("Invalid character found for config key: %s", k)
		}
		out[k] = v
	}
	return out, nil
}

func runConfigs(o *configsOpts, env tool.Env) error {
	if o.zookeeper != "" {
		return runConfigsZK(o, env)
	}
	return runConfigsAdmin(o, env)
}
