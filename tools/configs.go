package tools

// kafka-configs: describe and alter topic config overrides (Kafka 2.8
// ConfigCommand, entity type topics).
//
// Behaviour:
//   - --zookeeper reads and writes /config/topics/<t> through zkutil (with a
//     config-change notification, so brokers pick the change up) and prints
//     Kafka's deprecation warning first; --bootstrap-server uses
//     DescribeConfigs and IncrementalAlterConfigs;
//   - only --entity-type topics (or --topic) is supported; other entity
//     types are refused with a message;
//   - --add-config k1=v1,k2=[a,b] (commas inside brackets belong to the
//     value), --delete-config k1,k2 (each must exist); values are validated
//     against config.TopicKeys before anything is written;
//   - output: "Configs for topic 't' are k=v,..." (ZooKeeper describe),
//     "Dynamic configs for topic t are:" / "All configs for topic t are:"
//     followed by "  k=v sensitive=false synonyms={SOURCE:name=value, ...}"
//     (bootstrap describe), "Completed updating config for entity: topic 't'."
//     (ZooKeeper alter), "Completed updating config for topic t." (bootstrap).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/IBM/sarama"
	"github.com/urfave/cli/v2"

	"samsa/config"
	"samsa/zkutil"
)

type configsOpts struct {
	zookeeper, bootstrap, commandConfig string
	entityName                          string
	describe, alter, all                bool
	add                                 map[string]string
	del                                 []string
}

func configsCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:  "kafka-configs",
		Usage: "describe or alter topic config overrides",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "zookeeper", Usage: "DEPRECATED: ZooKeeper connection string host:port[/chroot]"},
			&cli.StringFlag{Name: "bootstrap-server", Usage: "broker(s) to connect to, host:port[,host:port]"},
			&cli.StringFlag{Name: "command-config", Usage: "properties file with Admin client settings"},
			&cli.StringFlag{Name: "entity-type", Usage: "topics (the only type Samsa's tool supports)"},
			&cli.StringFlag{Name: "entity-name", Usage: "topic name; all topics when omitted with --describe"},
			&cli.StringFlag{Name: "topic", Usage: "same as --entity-type topics --entity-name <topic>"},
			&cli.BoolFlag{Name: "describe", Usage: "list the configs of the entity"},
			&cli.BoolFlag{Name: "alter", Usage: "change the configs of the entity"},
			&cli.BoolFlag{Name: "all", Usage: "with --describe --bootstrap-server: every config, not only overrides"},
			&cli.StringFlag{Name: "add-config", Usage: "k1=v1,k2=[v1,v2,v2],k3=v3"},
			&cli.StringSliceFlag{Name: "delete-config", Usage: "k1,k2 (repeatable)"},
		},
		Action: func(c *cli.Context) error {
			o, err := parseConfigsOpts(c)
			if err == nil {
				err = runConfigs(o, env)
			}
			if err != nil {
				var te toolError
				if !errors.As(err, &te) {
					fmt.Fprintf(env.Stderr, "Error while executing config command with args '%s'\n", strings.Join(c.Args().Slice(), " "))
				}
				fmt.Fprintln(env.Stderr, userMessage(err))
				return exitError{1}
			}
			return nil
		},
	}
}

func parseConfigsOpts(c *cli.Context) (*configsOpts, error) {
	o := &configsOpts{zookeeper: c.String("zookeeper"), bootstrap: c.String("bootstrap-server"), commandConfig: c.String("command-config"),
		entityName: c.String("entity-name"), describe: c.Bool("describe"), alter: c.Bool("alter"), all: c.Bool("all")}
	entityType := c.String("entity-type")
	if t := c.String("topic"); t != "" {
		entityType, o.entityName = "topics", t
	}
	if (o.zookeeper == "") == (o.bootstrap == "") {
		return nil, toolError("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	if o.describe == o.alter {
		return nil, toolError("Command must include exactly one action: --describe, --alter")
	}
	if entityType == "" {
		return nil, toolError("At least one entity type must be specified")
	}
	if entityType != "topics" {
		return nil, toolErrorf("Samsa's kafka-configs supports --entity-type topics only, not %s", entityType)
	}
	if o.alter && o.entityName == "" {
		return nil, toolError("An entity name must be specified with --alter of topics")
	}
	var err error
	if o.add, err = parseAddConfig(c.String("add-config")); err != nil {
		return nil, err
	}
	for _, d := range c.StringSlice("delete-config") {
		for _, k := range strings.Split(d, ",") {
			if k = strings.TrimSpace(k); k != "" {
				o.del = append(o.del, k)
			}
		}
	}
	if o.alter && len(o.add) == 0 && len(o.del) == 0 {
		return nil, toolError("At least one of --add-config or --delete-config must be specified with --alter")
	}
	if o.describe && (len(o.add) > 0 || len(o.del) > 0) {
		return nil, toolError("Option \"[add-config]\" can't be used with option \"[describe]\"")
	}
	if o.all && (!o.describe || o.bootstrap == "") {
		return nil, toolError("Option \"[all]\" can only be used with --describe and --bootstrap-server")
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
			return nil, toolError("Invalid entity config: all configs to be added must be in the format \"key=val\".")
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(v))
		if !configKeyRE.MatchString(k) {
			return nil, toolErrorf("Invalid character found for config key: %s", k)
		}
		out[k] = v
	}
	return out, nil
}

func runConfigs(o *configsOpts, env Env) error {
	if o.zookeeper != "" {
		fmt.Fprintln(env.Stdout, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
		fmt.Fprintln(env.Stdout, "Use --bootstrap-server instead to specify a broker to connect to.")
		ctx, cancel := context.WithTimeout(context.Background(), zkToolTimeout)
		defer cancel()
		zk, err := zkutil.Connect(ctx, zkutil.Config{Connect: o.zookeeper, SessionTimeout: zkToolTimeout,
			ConnectionTimeout: zkToolTimeout, Logger: toolLogger(env, "kafka-configs")})
		if err != nil {
			return err
		}
		defer zk.Close()
		if o.describe {
			return describeConfigsZK(zk, o, env.Stdout)
		}
		return alterConfigsZK(zk, o, env.Stdout)
	}
	cfg, err := newSaramaConfig("samsa-kafka-configs", o.commandConfig, nil)
	if err != nil {
		return err
	}
	admin, err := sarama.NewClusterAdmin(splitServers(o.bootstrap), cfg)
	if err != nil {
		return err
	}
	defer admin.Close()
	if o.describe {
		return describeConfigsAdmin(admin, o, env.Stdout)
	}
	return alterConfigsAdmin(admin, o, env.Stdout)
}

func describeConfigsZK(zk *zkutil.Client, o *configsOpts, out io.Writer) error {
	names := []string{o.entityName}
	if o.entityName == "" {
		var err error
		if names, err = zk.GetEntityNames(zkutil.ConfigTypeTopic); err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		sort.Strings(names)
	}
	for _, n := range names {
		cfg, err := zk.GetEntityConfig(zkutil.ConfigTypeTopic, n)
		if err != nil {
			return err
		}
		var kv []string
		for _, k := range sortedStringKeys(cfg) {
			kv = append(kv, k+"="+cfg[k])
		}
		fmt.Fprintf(out, "Configs for topic '%s' are %s\n", n, strings.Join(kv, ","))
	}
	return nil
}

func alterConfigsZK(zk *zkutil.Client, o *configsOpts, out io.Writer) error {
	exists, err := zk.TopicExists(o.entityName)
	if err != nil {
		return err
	}
	if !exists {
		return commandFailure(fmt.Sprintf("Topic '%s' does not exist.", o.entityName))
	}
	cfg, err := zk.GetEntityConfig(zkutil.ConfigTypeTopic, o.entityName)
	if err != nil {
		return err
	}
	var invalid []string
	for _, k := range o.del {
		if _, ok := cfg[k]; !ok {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return toolErrorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	for k, v := range o.add {
		cfg[k] = v
	}
	for _, k := range o.del {
		delete(cfg, k)
	}
	if err := config.ValidateTopicOverrides(cfg); err != nil {
		return toolError(userMessage(err))
	}
	if err := zk.SetEntityConfig(zkutil.ConfigTypeTopic, o.entityName, cfg); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for entity: topic '%s'.\n", o.entityName)
	return nil
}

// sourceName is Kafka's ConfigEntry.ConfigSource enum name.
func sourceName(s sarama.ConfigSource) string {
	switch s {
	case sarama.SourceTopic:
		return "DYNAMIC_TOPIC_CONFIG"
	case sarama.SourceDynamicBroker:
		return "DYNAMIC_BROKER_CONFIG"
	case sarama.SourceDynamicDefaultBroker:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case sarama.SourceStaticBroker:
		return "STATIC_BROKER_CONFIG"
	case sarama.SourceDefault:
		return "DEFAULT_CONFIG"
	}
	return "UNKNOWN"
}

// writeConfigEntries prints bootstrap describe output for one topic.
func writeConfigEntries(out io.Writer, topic string, entries []sarama.ConfigEntry, all bool) {
	if all {
		fmt.Fprintf(out, "All configs for topic %s are:\n", topic)
	} else {
		fmt.Fprintf(out, "Dynamic configs for topic %s are:\n", topic)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	for _, e := range entries {
		if !all && e.Source != sarama.SourceTopic {
			continue
		}
		syn := make([]string, 0, len(e.Synonyms))
		for _, s := range e.Synonyms {
			syn = append(syn, fmt.Sprintf("%s:%s=%s", sourceName(s.Source), s.ConfigName, s.ConfigValue))
		}
		fmt.Fprintf(out, "  %s=%s sensitive=%t synonyms={%s}\n", e.Name, e.Value, e.Sensitive, strings.Join(syn, ", "))
	}
}

func describeConfigsAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	names := []string{o.entityName}
	if o.entityName == "" {
		topics, err := admin.ListTopics()
		if err != nil {
			return err
		}
		names = names[:0]
		for t := range topics {
			names = append(names, t)
		}
		sort.Strings(names)
	}
	for _, n := range names {
		res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: n}}, sarama.DescribeConfigsOptions{IncludeSynonyms: true})
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.ErrorCode != 0 {
				return toolError(r.ErrorMsg)
			}
			entries := make([]sarama.ConfigEntry, 0, len(r.Configs))
			for _, e := range r.Configs {
				entries = append(entries, e)
			}
			writeConfigEntries(out, n, entries, o.all)
		}
	}
	return nil
}

func alterConfigsAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	entries := make(map[string]sarama.IncrementalAlterConfigsEntry, len(o.add)+len(o.del))
	for k, v := range o.add {
		v := v
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}
	}
	for _, k := range o.del {
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationDelete}
	}
	if err := admin.IncrementalAlterConfig(sarama.TopicResource, o.entityName, entries, false); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for topic %s.\n", o.entityName)
	return nil
}
