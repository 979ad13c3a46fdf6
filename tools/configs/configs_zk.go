package configs

// kafka-configs through ZooKeeper (Kafka 2.8's deprecated --zookeeper
// path, AdminZkClient): read and write /config/<type>/<name>, with a
// /config/changes notification on every write.
//
// Output:
//
//	Configs for topic 't' are k1=v1,k2=v2
//	Configs for default brokers are k=v
//	Completed updating config for entity: user-principal 'alice'.

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"sort"
	"strconv"
	"strings"

	"samsa/config"
	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

// kafkaOnlyBrokerKeys are dynamic broker keys Kafka 2.8 accepts that have
// no place in Samsa's key table (replication throttles); they are stored
// and described, and have no effect.
var kafkaOnlyBrokerKeys = map[string]bool{
	"leader.replication.throttled.rate":              true,
	"follower.replication.throttled.rate":            true,
	"replica.alter.log.dirs.io.max.bytes.per.second": true,
}

// quotaKeyTypes are Kafka 2.8's client quota keys (QuotaConfigs) and
// their types.
var quotaKeyTypes = map[string]string{
	"producer_byte_rate":       "LONG",
	"consumer_byte_rate":       "LONG",
	"request_percentage":       "DOUBLE",
	"controller_mutation_rate": "DOUBLE",
}

// validateEntityConfig checks the full new config of an entity before it
// is written.
func validateEntityConfig(typ string, cfg map[string]string) error {
	switch typ {
	case zkutil.ConfigTypeTopic:
		if err := config.ValidateTopicOverrides(cfg); err != nil {
			return tool.Error(tool.UserMessage(err))
		}
	case zkutil.ConfigTypeBroker:
		props := map[string]string{"zookeeper.connect": "localhost:2181"}
		var notDynamic []string
		for _, k := range tool.SortedKeys(cfg) {
			if kafkaOnlyBrokerKeys[k] {
				if _, err := strconv.ParseInt(cfg[k], 10, 64); err != nil {
					return tool.Errorf("Invalid value %s for configuration %s: Not a number of type LONG", cfg[k], k)
				}
				continue
			}
			key, ok := findBrokerKey(k)
			if !ok {
				return tool.Errorf("Unknown Dynamic Configuration '%s'.", k)
			}
			if !key.Dynamic {
				notDynamic = append(notDynamic, k)
			}
			props[k] = cfg[k]
		}
		if len(notDynamic) > 0 {
			return tool.Errorf("Cannot update these configs dynamically: Set(%s)", strings.Join(notDynamic, ", "))
		}
		if _, _, err := config.NewBroker(props); err != nil {
			return tool.Error(tool.UserMessage(err))
		}
	case zkutil.ConfigTypeUser, zkutil.ConfigTypeClient, zkutil.ConfigTypeIP:
		for _, k := range tool.SortedKeys(cfg) {
			if typ == zkutil.ConfigTypeUser && isSCRAMKey(k) {
				continue // a stored credential (scramToStored)
			}
			if _, err := parseQuotaValue(typ, k, cfg[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ipQuotaKeyTypes are Kafka 2.8's ip entity keys (DynamicConfig.Ip,
// KIP-612).
var ipQuotaKeyTypes = map[string]string{"connection_creation_rate": "INT"}

// quotaKeysOf are the quota keys of an entity type.
func quotaKeysOf(entityType string) map[string]string {
	if entityType == zkutil.ConfigTypeIP {
		return ipQuotaKeyTypes
	}
	return quotaKeyTypes
}

// parseQuotaValue checks a quota key of an entity type and parses its value.
func parseQuotaValue(entityType, k, v string) (float64, error) {
	typ, ok := quotaKeysOf(entityType)[k]
	if !ok {
		return 0, tool.Errorf("Unknown Dynamic Configuration '%s'.", k)
	}
	if typ == "INT" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return 0, tool.Errorf("Invalid value %s for configuration %s: Not a number of type INT", v, k)
		}
		if n < 0 {
			return 0, tool.Errorf("Invalid value %s for configuration %s: Value must be at least 0", v, k)
		}
		return float64(n), nil
	}
	if typ == "LONG" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, tool.Errorf("Invalid value %s for configuration %s: Not a number of type LONG", v, k)
		}
		return float64(n), nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, tool.Errorf("Invalid value %s for configuration %s: Not a number of type DOUBLE", v, k)
	}
	return f, nil
}

// findBrokerKey is the key a broker config name sets: itself, or the key a
// listener.name.<l>.[<mechanism>.] override stands for.
func findBrokerKey(name string) (config.Key, bool) {
	name, _ = listenerBaseName(name)
	for _, k := range config.BrokerKeys {
		if k.Name == name {
			return k, true
		}
	}
	return config.Key{}, false
}

func runConfigsZK(o *configsOpts, env tool.Env) error {
	fmt.Fprintln(env.Stdout, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.")
	fmt.Fprintln(env.Stdout, "Use --bootstrap-server instead to specify a broker to connect to.")
	sec := tool.ZKSecurity{Hint: "--zk-tls-config-file"}
	if o.zkTLSFile != "" {
		props, err := tool.ReadZKTLSFile(o.zkTLSFile)
		if err != nil {
			return err
		}
		sec.TLSProps = props
	}
	zk, err := tool.ConnectZK(env, "kafka-configs", o.zookeeper, sec)
	if err != nil {
		return err
	}
	defer zk.Close()
	if o.describe {
		return describeConfigsZK(zk, o, env.Stdout)
	}
	return alterConfigsZK(zk, o, env.Stdout)
}

// describeConfigsZK prints the overrides of one entity, or of every entity
// of the type in znode name order.
func describeConfigsZK(zk *zkutil.Client, o *configsOpts, out io.Writer) error {
	entities := []configEntity{o.entity}
	if o.entity.name == "" && !o.entity.isDefault {
		names, err := zk.GetEntityNames(o.entity.typ)
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		sort.Strings(names)
		entities = entities[:0]
		for _, n := range names {
			e := configEntity{typ: o.entity.typ}
			switch {
			case n == "<default>":
				e.isDefault = true
			case e.typ == zkutil.ConfigTypeUser || e.typ == zkutil.ConfigTypeClient:
				e.name = desanitizeEntityName(n)
			default:
				e.name = n
			}
			entities = append(entities, e)
		}
	}
	for _, e := range entities {
		cfg, err := zk.GetEntityConfig(e.typ, e.zkName())
		if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
			return err
		}
		var kv []string
		for _, k := range tool.SortedKeys(cfg) {
			kv = append(kv, k+"="+cfg[k])
		}
		fmt.Fprintf(out, "Configs for %s are %s\n", e, strings.Join(kv, ","))
	}
	return nil
}

// alterConfigsZK rewrites the entity's znode (AdminZkClient.changeConfigs)
// and announces the change under /config/changes.
func alterConfigsZK(zk *zkutil.Client, o *configsOpts, out io.Writer) error {
	e := o.entity
	if e.typ == zkutil.ConfigTypeTopic {
		exists, err := zk.TopicExists(e.name)
		if err != nil {
			return err
		}
		if !exists {
			return tool.CommandFailure(fmt.Sprintf("Topic '%s' does not exist.", e.name))
		}
	}
	// As Kafka, the added configs are checked and rewritten first, before
	// the stored ones are read.
	switch e.typ {
	case zkutil.ConfigTypeUser:
		if err := scramToStored(o.add); err != nil {
			return err
		}
	case zkutil.ConfigTypeBroker:
		if err := brokerConfigsZK(zk, e, o.add); err != nil {
			return err
		}
	}
	cfg, err := zk.GetEntityConfig(e.typ, e.zkName())
	if err != nil && !errors.Is(err, zkutil.ErrNoNode) {
		return err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	var invalid []string
	for _, k := range o.del {
		if _, ok := cfg[k]; !ok {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return tool.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	maps.Copy(cfg, o.add)
	for _, k := range o.del {
		delete(cfg, k)
	}
	if err := validateEntityConfig(e.typ, cfg); err != nil {
		return err
	}
	if err := zk.SetEntityConfig(e.typ, e.zkName(), cfg); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for entity: %s.\n", e)
	return nil
}
