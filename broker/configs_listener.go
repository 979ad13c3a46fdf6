package broker

import (
	"maps"
	"slices"
	"strings"
)

// DescribeConfigs of a broker also lists the listener overrides
// (listener.name.<l>.<key>, and listener.name.<l>.<mech>.sasl.jaas.config)
// set in server.properties or dynamically, as Kafka 2.8 does (its
// describe walks the config's originals): each under its full name, its
// value from the per-broker dynamic entity, the cluster-default one or
// server.properties in that order, and with synonyms first of its own
// name then of its base key (DynamicBrokerConfig.brokerConfigSynonyms with
// matchListenerOverride), ending in the base key's default. The sources
// come from configs.go, which names their kmsg.ConfigSource.

// listenerBaseKey is the base key of a listener override: what follows
// listener.name.<l>., without a mechanism prefix for sasl.jaas.config.
func listenerBaseKey(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "listener.name.")
	if !ok {
		return "", false
	}
	_, base, ok := strings.Cut(rest, ".")
	if ok && strings.HasSuffix(base, ".sasl.jaas.config") {
		base = "sasl.jaas.config"
	}
	return base, ok
}

// describeListenerConfigs describes the listener overrides found in
// sources (in precedence order); defaults, when its src is set (vals
// unused), adds the base key's default as the last synonym.
func describeListenerConfigs(sources []listenerSource, defaults *listenerSource) []describedConfig {
	names := map[string]bool{}
	for _, s := range sources {
		for n := range s.vals {
			names[n] = true
		}
	}
	var out []describedConfig
	for _, name := range slices.Sorted(maps.Keys(names)) {
		base, ok := listenerBaseKey(name)
		k, known := brokerKey(base)
		if !ok || !known {
			continue
		}
		d := describedConfig{name: name, readOnly: !k.Dynamic, sensitive: isPasswordConfig(name), typ: k.Type, doc: k.Doc}
		for _, syn := range []string{name, base} {
			for _, s := range sources {
				if v, ok := s.vals[syn]; ok {
					d.synonyms = append(d.synonyms, configSynonym{syn, v, s.src})
				}
			}
		}
		if defaults != nil && !k.Null {
			d.synonyms = append(d.synonyms, configSynonym{base, k.Default, defaults.src})
		}
		d.value, d.source = d.synonyms[0].value, d.synonyms[0].source
		out = append(out, d)
	}
	return out
}
