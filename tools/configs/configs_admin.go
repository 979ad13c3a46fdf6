package configs

// kafka-configs through the Admin API (--bootstrap-server), as Kafka 2.8's
// ConfigCommand.processCommand.
//
// Output:
//
//	Dynamic configs for topic t are:            (All configs ... with --all)
//	  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}
//	Dynamic configs for broker 1 are:
//	Default configs for brokers in the cluster are:
//	Quota configs for user-principal 'alice' are producer_byte_rate=1024.0
//	Completed updating config for topic t.
//	Completed updating default config for brokers in the cluster.
//
// Differs from 2.8: broker configs are altered with IncrementalAlterConfigs
// (Kafka 2.8's tool sends the whole set with the legacy AlterConfigs,
// which Samsa's broker serves for topics only); users and clients take one
// entity at a time.

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	"samsa/tools/internal/tool"
	"samsa/zkutil"
)

func runConfigsAdmin(o *configsOpts, env tool.Env) error {
	cfg, err := tool.NewSaramaConfig("samsa-kafka-configs", o.commandConfig, nil)
	if err != nil {
		return err
	}
	admin, err := sarama.NewClusterAdmin(tool.SplitList(o.bootstrap), cfg)
	if err != nil {
		return err
	}
	defer admin.Close()
	switch {
	case o.entity.typ == brokerLoggersType && o.describe:
		err = describeBrokerLoggersAdmin(admin, o, env.Stdout)
	case o.entity.typ == brokerLoggersType:
		err = alterBrokerLoggersAdmin(admin, o, env.Stdout)
	case o.entity.typ == zkutil.ConfigTypeUser || o.entity.typ == zkutil.ConfigTypeClient || o.entity.typ == zkutil.ConfigTypeIP:
		if o.describe {
			err = describeQuotasAdmin(admin, o, env.Stdout)
			if err == nil && o.entity.typ == zkutil.ConfigTypeUser && !o.entity.isDefault {
				err = describeSCRAMAdmin(admin, o, env.Stdout)
			}
			break
		}
		if o.entity.typ == zkutil.ConfigTypeUser {
			if o.add, o.del, err = alterSCRAMAdmin(admin, o); err != nil {
				break
			}
		}
		err = alterQuotasAdmin(admin, o, env.Stdout)
	case o.describe:
		err = describeConfigsAdmin(admin, o, env.Stdout)
	default:
		err = alterConfigsAdmin(admin, o, env.Stdout)
	}
	return configsAdminError(err)
}

// configsAdminError words a broker's error code as the Java admin client's
// exception: "org.apache.kafka.common.errors.InvalidRequestException:
// <the broker's message>" (Kafka's default message when there is none).
func configsAdminError(err error) error {
	var ke sarama.KError
	if err == nil || !errors.As(err, &ke) {
		return err
	}
	msg, ok := strings.CutPrefix(err.Error(), ke.Error()+": ")
	if !ok {
		return tool.CommandFailure(tool.JavaExceptionText(int16(ke)))
	}
	return tool.CommandFailure(tool.JavaExceptionClass(int16(ke)) + ": " + msg)
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

// configValueString prints a config value as Java prints a String that may be
// null (sensitive values are returned as null).
func configValueString(v string, sensitive bool) string {
	if sensitive && v == "" {
		return "null"
	}
	return v
}

// writeConfigEntryLines prints Kafka's entry lines, sorted by name, for
// the entries whose source is keep (all of them when keep is nil).
func writeConfigEntryLines(out io.Writer, entries []sarama.ConfigEntry, keep *sarama.ConfigSource) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	for _, e := range entries {
		if keep != nil && e.Source != *keep {
			continue
		}
		syn := make([]string, 0, len(e.Synonyms))
		for _, s := range e.Synonyms {
			syn = append(syn, fmt.Sprintf("%s:%s=%s", sourceName(s.Source), s.ConfigName, configValueString(s.ConfigValue, e.Sensitive)))
		}
		fmt.Fprintf(out, "  %s=%s sensitive=%t synonyms={%s}\n", e.Name, configValueString(e.Value, e.Sensitive), e.Sensitive, strings.Join(syn, ", "))
	}
}

// writeConfigEntries prints bootstrap describe output for one topic.
func writeConfigEntries(out io.Writer, topic string, entries []sarama.ConfigEntry, all bool) {
	keep := sarama.SourceTopic
	if all {
		fmt.Fprintf(out, "All configs for topic %s are:\n", topic)
		writeConfigEntryLines(out, entries, nil)
		return
	}
	fmt.Fprintf(out, "Dynamic configs for topic %s are:\n", topic)
	writeConfigEntryLines(out, entries, &keep)
}

// describeConfigsAdmin prints topic or broker configs: one entity, or every
// topic (internal ones included), or every broker and then the cluster
// default.
func describeConfigsAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	e := o.entity
	resType, kind := sarama.TopicResource, "topic"
	if e.typ == zkutil.ConfigTypeBroker {
		resType, kind = sarama.BrokerResource, "broker"
	}
	var names []string // "" is the broker default
	switch {
	case e.isDefault:
		names = []string{""}
	case e.name != "":
		names = []string{e.name}
	case e.typ == zkutil.ConfigTypeTopic:
		topics, err := admin.ListTopics()
		if err != nil {
			return err
		}
		for t := range topics {
			names = append(names, t)
		}
		sort.Strings(names)
	default:
		brokers, _, err := admin.DescribeCluster()
		if err != nil {
			return err
		}
		ids := make([]int, 0, len(brokers))
		for _, b := range brokers {
			ids = append(ids, int(b.ID()))
		}
		sort.Ints(ids)
		for _, id := range ids {
			names = append(names, strconv.Itoa(id))
		}
		names = append(names, "")
	}
	for _, n := range names {
		res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: resType, Name: n}}, sarama.DescribeConfigsOptions{IncludeSynonyms: true})
		if err != nil {
			return err
		}
		var keep *sarama.ConfigSource
		src := sarama.SourceTopic
		switch {
		case kind == "broker" && n == "":
			src = sarama.SourceDynamicDefaultBroker
			fmt.Fprintf(out, "Default configs for %s in the cluster are:\n", e.typ)
		case o.all:
			fmt.Fprintf(out, "All configs for %s %s are:\n", kind, n)
		default:
			if kind == "broker" {
				src = sarama.SourceDynamicBroker
			}
			fmt.Fprintf(out, "Dynamic configs for %s %s are:\n", kind, n)
		}
		if !o.all {
			keep = &src
		}
		for _, r := range res {
			if r.ErrorCode != 0 {
				return tool.Error(r.ErrorMsg)
			}
			entries := make([]sarama.ConfigEntry, 0, len(r.Configs))
			for _, c := range r.Configs {
				entries = append(entries, c)
			}
			writeConfigEntryLines(out, entries, keep)
		}
	}
	return nil
}

// alterConfigsAdmin changes topic or broker configs with
// IncrementalAlterConfigs after checking, as Kafka, that every deleted key
// is currently set dynamically.
func alterConfigsAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	e := o.entity
	resType, src := sarama.TopicResource, sarama.SourceTopic
	if e.typ == zkutil.ConfigTypeBroker {
		resType, src = sarama.BrokerResource, sarama.SourceDynamicBroker
		if e.isDefault {
			src = sarama.SourceDynamicDefaultBroker
		}
	}
	if len(o.del) > 0 {
		res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: resType, Name: e.name}}, sarama.DescribeConfigsOptions{})
		if err != nil {
			return err
		}
		set := map[string]bool{}
		for _, r := range res {
			if r.ErrorCode != 0 {
				return tool.Error(r.ErrorMsg)
			}
			for _, c := range r.Configs {
				if c.Source == src {
					set[c.Name] = true
				}
			}
		}
		var invalid []string
		for _, k := range o.del {
			if !set[k] {
				invalid = append(invalid, k)
			}
		}
		if len(invalid) > 0 {
			return tool.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
		}
	}
	entries := make(map[string]sarama.IncrementalAlterConfigsEntry, len(o.add)+len(o.del))
	for k, v := range o.add {
		v := v
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}
	}
	for _, k := range o.del {
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationDelete}
	}
	if err := admin.IncrementalAlterConfig(resType, e.name, entries, false); err != nil {
		return err
	}
	printCompleted(out, e)
	return nil
}

// printCompleted prints Kafka's line after a bootstrap alter.
func printCompleted(out io.Writer, e configEntity) {
	if e.isDefault {
		fmt.Fprintf(out, "Completed updating default config for %s in the cluster.\n", e.typ)
		return
	}
	fmt.Fprintf(out, "Completed updating config for %s %s.\n", strings.TrimSuffix(e.typ, "s"), e.name)
}

// quotaEntity is the single-component client quota entity of e.
func quotaEntity(e configEntity) sarama.QuotaEntityComponent {
	c := sarama.QuotaEntityComponent{EntityType: sarama.QuotaEntityUser, MatchType: sarama.QuotaMatchExact, Name: e.name}
	switch e.typ {
	case zkutil.ConfigTypeClient:
		c.EntityType = sarama.QuotaEntityClientID
	case zkutil.ConfigTypeIP:
		c.EntityType = sarama.QuotaEntityIP
	}
	if e.isDefault {
		c.MatchType, c.Name = sarama.QuotaMatchDefault, ""
	}
	return c
}

// quotaEntityString is Kafka's describe wording of a quota entity.
func quotaEntityString(comps []sarama.QuotaEntityComponent) string {
	var parts []string
	for _, want := range []sarama.QuotaEntityType{sarama.QuotaEntityUser, sarama.QuotaEntityClientID, sarama.QuotaEntityIP} {
		for _, c := range comps {
			if c.EntityType != want {
				continue
			}
			typ := map[sarama.QuotaEntityType]string{sarama.QuotaEntityUser: "user-principal",
				sarama.QuotaEntityClientID: "client-id", sarama.QuotaEntityIP: "ip"}[want]
			if c.MatchType == sarama.QuotaMatchDefault {
				parts = append(parts, "the default "+typ)
			} else {
				parts = append(parts, fmt.Sprintf("%s '%s'", typ, c.Name))
			}
		}
	}
	return strings.Join(parts, ", ")
}

func describeQuotasAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	e := o.entity
	filter := sarama.QuotaFilterComponent{EntityType: quotaEntity(e).EntityType, MatchType: sarama.QuotaMatchAny}
	switch {
	case e.isDefault:
		filter.MatchType = sarama.QuotaMatchDefault
	case e.name != "":
		filter.MatchType, filter.Match = sarama.QuotaMatchExact, e.name
	}
	entries, err := admin.DescribeClientQuotas([]sarama.QuotaFilterComponent{filter}, true)
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool {
		return quotaEntityString(entries[i].Entity) < quotaEntityString(entries[j].Entity)
	})
	for _, en := range entries {
		keys := make([]string, 0, len(en.Values))
		for k := range en.Values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		kv := make([]string, 0, len(keys))
		for _, k := range keys {
			kv = append(kv, k+"="+tool.JavaDouble(en.Values[k]))
		}
		fmt.Fprintf(out, "Quota configs for %s are %s\n", quotaEntityString(en.Entity), strings.Join(kv, ", "))
	}
	return nil
}

func alterQuotasAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	e := o.entity
	var ops []sarama.ClientQuotasOp
	for _, k := range tool.SortedKeys(o.add) {
		v, err := parseQuotaValue(e.typ, k, o.add[k])
		if err != nil {
			return err
		}
		ops = append(ops, sarama.ClientQuotasOp{Key: k, Value: v})
	}
	for _, k := range o.del {
		if _, ok := quotaKeysOf(e.typ)[k]; !ok {
			return tool.Errorf("Unknown Dynamic Configuration '%s'.", k)
		}
		ops = append(ops, sarama.ClientQuotasOp{Key: k, Remove: true})
	}
	ent := []sarama.QuotaEntityComponent{quotaEntity(e)}
	for _, op := range ops {
		if err := admin.AlterClientQuotas(ent, op, false); err != nil {
			return err
		}
	}
	printCompleted(out, e)
	return nil
}
