package config

import (
	"reflect"
	"sort"
)

// ConfigSource says where a described value comes from; the numbers are
// Kafka's DescribeConfigs ConfigSource ids.
type ConfigSource int8

// Config sources. This package sees only server.properties and a topic's
// own overrides, so DescribeTopic and DescribeBroker produce Topic,
// StaticBroker and Default. Samsa does have dynamic broker configs
// (/config/brokers/<id> and /config/brokers/<default>, written by
// AlterConfigs, IncrementalAlterConfigs and kafka-configs --entity-type
// brokers, and applied at run time by the broker's /config/changes
// listener): the broker layers them over these entries with DynamicBroker
// and DynamicDefaultBroker (broker/configs.go).
const (
	SourceUnknown              ConfigSource = 0
	SourceTopic                ConfigSource = 1 // TOPIC_CONFIG
	SourceDynamicBroker        ConfigSource = 2 // DYNAMIC_BROKER_CONFIG
	SourceDynamicDefaultBroker ConfigSource = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG
	SourceStaticBroker         ConfigSource = 4 // STATIC_BROKER_CONFIG
	SourceDefault              ConfigSource = 5 // DEFAULT_CONFIG
)

// Synonym is one DescribeConfigs synonym: a key that supplies (or would
// supply) the value, in precedence order.
type Synonym struct {
	Name   string
	Value  string
	Source ConfigSource
}

// Entry is one DescribeConfigs entry.
type Entry struct {
	Name      string
	Value     string
	Null      bool // the value is null (an unset key whose default is null)
	Source    ConfigSource
	ReadOnly  bool
	Sensitive bool // a password key (Key.Password): Value is empty and Null set
	Type      Type
	Doc       string
	Synonyms  []Synonym // precedence order; callers drop them unless asked
}

// brokerSynonyms lists the broker keys that feed name, in precedence order
// (Kafka's DynamicBrokerConfig.brokerConfigSynonyms).
func brokerSynonyms(name string) []string {
	switch name {
	case "log.roll.ms":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.retention.ms":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	}
	return []string{name}
}

// configSynonyms follows Kafka's ZkAdminManager.configSynonyms: static
// values of the synonyms, then their non-null defaults, with everything
// before the first entry named name dropped (so a ms key that is unset hides
// its hours synonym, exactly as Kafka 2.8 reports it).
func (b *Broker) configSynonyms(name string) []Synonym {
	names := brokerSynonyms(name)
	var all []Synonym
	for _, n := range names {
		if v, ok := b.supplied[n]; ok {
			all = append(all, Synonym{Name: n, Value: v, Source: SourceStaticBroker})
		}
	}
	for _, n := range names {
		if k, ok := findKey(BrokerKeys, n); ok && !k.Null {
			all = append(all, Synonym{Name: n, Value: k.Default, Source: SourceDefault})
		}
	}
	for i, s := range all {
		if s.Name == name {
			return all[i:]
		}
	}
	return nil
}

// DescribeBroker returns an entry per broker key, sorted by name, as Kafka's
// DescribeConfigs answers for a BROKER resource: the effective value, source
// STATIC_BROKER_CONFIG when the key was supplied and DEFAULT_CONFIG
// otherwise, ReadOnly for keys Kafka cannot change at run time.
func (b *Broker) DescribeBroker() []Entry {
	v := reflect.ValueOf(b).Elem()
	out := make([]Entry, 0, len(BrokerKeys))
	for _, k := range BrokerKeys {
		val := fieldValue(v.FieldByName(k.Field))
		e := Entry{Name: k.Name, Value: formatValue(val), Null: val == nil || (k.Null && k.Type == TypeString && formatValue(val) == ""),
			ReadOnly: !k.Dynamic, Type: k.Type, Doc: k.Doc, Synonyms: b.configSynonyms(k.Name), Source: SourceDefault}
		if len(e.Synonyms) > 0 {
			e.Source = e.Synonyms[0].Source
		}
		if k.Password {
			e.Value, e.Null, e.Sensitive = "", true, true
			for i := range e.Synonyms {
				e.Synonyms[i].Value = ""
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DescribeTopic returns an entry per topic key, sorted by name, as Kafka's
// DescribeConfigs answers for a TOPIC resource (ZkAdminManager
// createTopicConfigEntry): the source is that of the first synonym, the
// topic override first, then the broker's static and default values. With
// the stock server.properties this reports segment.bytes as
// STATIC_BROKER_CONFIG, which kafka-topics --describe then prints, as Kafka
// does.
func (t *Topic) DescribeTopic(b *Broker) []Entry {
	if b == nil {
		b = Defaults()
	}
	out := make([]Entry, 0, len(TopicKeys))
	for _, k := range TopicKeys {
		value, override, _ := t.Value(k.Name)
		var syn []Synonym
		if override {
			syn = append(syn, Synonym{Name: k.Name, Value: value, Source: SourceTopic})
		}
		if k.Synonym != "" {
			syn = append(syn, b.configSynonyms(k.Synonym)...)
		}
		e := Entry{Name: k.Name, Value: value, Type: k.Type, Doc: k.Doc, Synonyms: syn, Source: SourceDefault}
		if len(syn) > 0 {
			e.Source = syn[0].Source
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
