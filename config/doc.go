// Package config turns server.properties (plus --override key=value pairs)
// into a typed Broker, and per-topic overrides into a typed Topic (Kafka's
// LogConfig).
//
// Owns: reading properties files (ReadPropertiesFile, bounded, over the
// shared javaprops parser that storage's meta.properties also uses), the
// single table of broker keys (BrokerKeys) and topic keys (TopicKeys) with
// Kafka 2.8's names, types, defaults, valid ranges and one-line docs, value
// parsing and
// validation, the resolution rules Kafka applies between keys
// (log.retention.ms > .minutes > .hours, log.dirs > log.dir, listeners >
// host.name:port, ...), the DescribeConfigs view of both (DescribeBroker,
// DescribeTopic: value, source and synonyms by Kafka 2.8's rules, numbered as
// the wire's ConfigSource), and the generated docs/configuration.md
// ("go generate ./config"; TestConfigDocsUpToDate fails when it is stale).
//
// Must never import: any samsa package but the leaf javaprops, logrus,
// go-zookeeper/zk, kmsg, sarama. It does not log: unknown keys come back as
// Warning values for the caller to log, and every invalid value is reported
// at once in an errors.Join error whose parts are *KeyError (or wrap ErrMissingRequired,
// ErrUnknownTopicConfig).
//
// Concurrency: no goroutines, no package-level mutable state. Broker and
// Topic values are immutable after construction and safe for concurrent
// reads. BrokerKeys and TopicKeys must not be modified.
//
// Formats: properties syntax is that of java.util.Properties.load (package
// javaprops), except that files are read as UTF-8 instead of ISO-8859-1:
//
//	# comment            ! comment
//	key=value            key: value            key value
//	path=C:\\dir         key\ with\ spaces=x   unicode=\u00e9
//	long.list=a,\
//	          b          (continuation: "a,b")
//
// Typed values follow Kafka's ConfigDef: numbers and strings are trimmed,
// booleans are case-insensitive true/false, lists are comma separated with
// blanks trimmed.
package config
