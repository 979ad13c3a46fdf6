// Package configs is kafka-configs (Kafka 2.8's kafka.admin.ConfigCommand):
// describe and alter the dynamic configs of topics, brokers, broker
// loggers, users (quotas and SCRAM credentials) and clients.
//
// Owns: configs.go (options, entity parsing and naming), configs_zk.go
// (--zookeeper: /config/<type>/<name> through zkutil plus the
// /config/changes notification), configs_admin.go (--bootstrap-server:
// DescribeConfigs, IncrementalAlterConfigs, Describe/AlterClientQuotas),
// configs_loggers.go (broker-loggers), configs_scram.go (SCRAM credentials:
// derived with broker/security/scram for --zookeeper,
// Describe/AlterUserScramCredentials for --bootstrap-server),
// configs_broker_zk.go (--zookeeper on brokers: refused but for the
// replication throttles while the broker, or for the default any broker,
// is registered, as Kafka's bootstrap-only path; password configs
// encrypted with the password.encoder.* keys given, in Kafka's
// PasswordEncoder format from broker/security/pwencoder, or refused
// without a secret).
//
// Output formats: Kafka's ("Dynamic configs for topic t are:", one
// "  key=value sensitive=false synonyms={...}" line per entry; "Completed
// updating config for topic t."; quota and SCRAM lines as ConfigCommand
// prints them).
//
// Concurrency: none of its own.
package configs
