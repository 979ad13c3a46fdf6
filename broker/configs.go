package broker

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/config"
	"samsa/zkutil"
)

// describedConfig is one entry of a DescribeConfigs answer.
type describedConfig struct {
	name, value string
	null        bool // the value is Kafka's null (a key without default, unset)
	sensitive   bool // a password: value and synonyms answered null, as Kafka
	source      kmsg.ConfigSource
	readOnly    bool
	typ         config.Type
	doc         string
	synonyms    []configSynonym
}

type configSynonym struct {
	name, value string
	source      kmsg.ConfigSource
}

// configType maps a config key type to Kafka's ConfigType.
func configType(t config.Type) kmsg.ConfigType {
	switch t {
	case config.TypeBool:
		return kmsg.ConfigTypeBoolean
	case config.TypeShort:
		return kmsg.ConfigTypeShort
	case config.TypeInt:
		return kmsg.ConfigTypeInt
	case config.TypeLong:
		return kmsg.ConfigTypeLong
	case config.TypeDouble:
		return kmsg.ConfigTypeDouble
	case config.TypeList:
		return kmsg.ConfigTypeList
	}
	return kmsg.ConfigTypeString
}

// topicOverrides reads /config/topics/<t> (empty when absent).
func (b *Broker) topicOverrides(topic string) (map[string]string, error) {
	o, err := b.zk.GetEntityConfig(zkutil.ConfigTypeTopic, topic)
	if errors.Is(err, zkutil.ErrNoNode) {
		return map[string]string{}, nil
	}
	if o == nil && err == nil {
		o = map[string]string{}
	}
	return o, err
}

// describeTopicConfigs lists every topic key with its effective value and
// source, that of its first synonym: the topic override
// (DYNAMIC_TOPIC_CONFIG), the dynamic broker synonym (DYNAMIC_BROKER_CONFIG,
// DYNAMIC_DEFAULT_BROKER_CONFIG), then the broker's static and default
// synonyms as Kafka 2.8 lists them (STATIC_BROKER_CONFIG, DEFAULT_CONFIG).
func (b *Broker) describeTopicConfigs(topic string) ([]describedConfig, error) {
	if _, ok := b.meta.Snapshot().Topics[topic]; !ok {
		return nil, fmt.Errorf("%w: %q", errUnknownTopic, topic)
	}
	overrides, err := b.topicOverrides(topic)
	if err != nil {
		return nil, err
	}
	tc, err := config.TopicFromOverrides(b.topicDefaults(), overrides)
	if err != nil {
		tc, _ = config.TopicFromOverrides(b.topicDefaults(), nil)
		overrides = map[string]string{}
	}
	perBroker := b.dynamicBrokerConfig(strconv.Itoa(int(b.ID())))
	clusterDefault := b.dynamicBrokerConfig(defaultBrokerEntity)
	// Static and default synonyms by Kafka's rule (config.DescribeTopic).
	static := map[string][]config.Synonym{}
	for _, e := range tc.DescribeTopic(b.cfg) {
		static[e.Name] = e.Synonyms
	}
	var out []describedConfig
	for _, k := range config.TopicKeys {
		v, override, ok := tc.Value(k.Name)
		if !ok {
			continue
		}
		d := describedConfig{name: k.Name, value: v, source: kmsg.ConfigSourceDefaultConfig, typ: k.Type, doc: k.Doc}
		if override {
			d.synonyms = append(d.synonyms, configSynonym{k.Name, overrides[k.Name], kmsg.ConfigSourceDynamicTopicConfig})
		}
		if k.Synonym != "" {
			// Dynamic broker overrides come before the static value.
			for _, dyn := range []struct {
				m   map[string]string
				src kmsg.ConfigSource
			}{{perBroker, kmsg.ConfigSourceDynamicBrokerConfig}, {clusterDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig}} {
				if dv, ok := dyn.m[k.Synonym]; ok {
					d.synonyms = append(d.synonyms, configSynonym{k.Synonym, dv, dyn.src})
				}
			}
		}
		for _, syn := range static[k.Name] {
			if syn.Source != config.SourceTopic {
				d.synonyms = append(d.synonyms, configSynonym{syn.Name, syn.Value, kmsg.ConfigSource(syn.Source)})
			}
		}
		if len(d.synonyms) > 0 {
			d.source = d.synonyms[0].source
		}
		out = append(out, d)
	}
	return out, nil
}

// describeBrokerConfigs describes broker resource name as Kafka 2.8's
// ConfigHelper: for this broker's id, every broker key with its value and
// the synonyms DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
// STATIC_BROKER_CONFIG and DEFAULT_CONFIG that exist (the source is the
// first; keys without a default and unset have a null value); for "" (the
// cluster-wide default entity) only the dynamic defaults stored in
// /config/brokers/<default>.
func (b *Broker) describeBrokerConfigs(name string) ([]describedConfig, error) {
	if name != "" && name != strconv.Itoa(int(b.ID())) {
		return nil, fmt.Errorf("%w: broker %q is not this broker (%d)", errInvalidRequest, name, b.ID())
	}
	// Dynamic overrides stored by IncrementalAlterConfigs or
	// kafka-configs.sh, described as Kafka does: per-broker first, then the
	// cluster default (dynamic_config_apply.go says which are applied).
	perBroker := b.dynamicBrokerConfig(strconv.Itoa(int(b.ID())))
	clusterDefault := b.dynamicBrokerConfig("<default>")
	var out []describedConfig
	for _, k := range config.BrokerKeys {
		v, supplied, ok := b.cfg.Value(k.Name)
		if !ok {
			continue
		}
		if name == "" {
			if dv, ok := clusterDefault[k.Name]; ok {
				src := kmsg.ConfigSourceDynamicDefaultBrokerConfig
				out = append(out, describedConfig{name: k.Name, value: dv, source: src, readOnly: !k.Dynamic,
					sensitive: k.Password, typ: k.Type, doc: k.Doc, synonyms: []configSynonym{{k.Name, dv, src}}})
			}
			continue
		}
		d := describedConfig{name: k.Name, value: v, source: kmsg.ConfigSourceDefaultConfig,
			readOnly: !k.Dynamic, typ: k.Type, doc: k.Doc}
		if dv, ok := perBroker[k.Name]; ok {
			d.value, d.source = dv, kmsg.ConfigSourceDynamicBrokerConfig
			d.synonyms = append(d.synonyms, configSynonym{k.Name, dv, kmsg.ConfigSourceDynamicBrokerConfig})
		}
		if dv, ok := clusterDefault[k.Name]; ok {
			if d.source == kmsg.ConfigSourceDefaultConfig {
				d.value, d.source = dv, kmsg.ConfigSourceDynamicDefaultBrokerConfig
			}
			d.synonyms = append(d.synonyms, configSynonym{k.Name, dv, kmsg.ConfigSourceDynamicDefaultBrokerConfig})
		}
		if supplied {
			if d.source == kmsg.ConfigSourceDefaultConfig {
				d.source = kmsg.ConfigSourceStaticBrokerConfig
			}
			d.synonyms = append(d.synonyms, configSynonym{k.Name, v, kmsg.ConfigSourceStaticBrokerConfig})
		}
		d.sensitive = k.Password
		if k.Null {
			d.null = d.source == kmsg.ConfigSourceDefaultConfig
		} else {
			def := k.Default
			if !supplied {
				def = v // the default as the broker formats it
			}
			d.synonyms = append(d.synonyms, configSynonym{k.Name, def, kmsg.ConfigSourceDefaultConfig})
		}
		out = append(out, d)
	}
	return append(out, describeListenerConfigs(b.listenerSources(name == "", perBroker, clusterDefault))...), nil
}

// listenerSource is one place listener overrides are read from and the
// source they are described with (configs_listener.go).
type listenerSource struct {
	vals map[string]string
	src  kmsg.ConfigSource
}

// listenerSources are the places the listener overrides of a broker
// resource come from, in precedence order, and the default's source (nil
// for the cluster-default resource, which shows its dynamic values only).
func (b *Broker) listenerSources(defaultOnly bool, perBroker, clusterDefault map[string]string) ([]listenerSource, *listenerSource) {
	if defaultOnly {
		return []listenerSource{{clusterDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig}}, nil
	}
	return []listenerSource{
		{perBroker, kmsg.ConfigSourceDynamicBrokerConfig},
		{clusterDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{b.cfg.Supplied(), kmsg.ConfigSourceStaticBrokerConfig},
	}, &listenerSource{src: kmsg.ConfigSourceDefaultConfig}
}

// newTopicOverrides validates a full set of overrides for a topic.
func validateTopicConfigs(overrides map[string]string) error {
	if err := config.ValidateTopicOverrides(overrides); err != nil {
		return fmt.Errorf("%w: %w", errInvalidConfig, err)
	}
	return nil
}

// writeTopicConfig stores a topic's overrides and announces the change
// (Kafka AdminZkClient.changeTopicConfig: /config/topics/<t>, then one
// config_change_ notification every broker picks up). SetEntityConfig
// writes both.
func (b *Broker) writeTopicConfig(topic string, overrides map[string]string) error {
	return b.zk.SetEntityConfig(zkutil.ConfigTypeTopic, topic, overrides)
}

// dynamicBrokerConfig reads /config/brokers/<entity> (empty when absent or
// unreadable).
func (b *Broker) dynamicBrokerConfig(entity string) map[string]string {
	m, err := b.zk.GetEntityConfig(zkutil.ConfigTypeBroker, entity)
	if err != nil || m == nil {
		return map[string]string{}
	}
	return m
}
