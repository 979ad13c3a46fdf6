// Package topics is kafka-topics (Kafka 2.8's TopicCommand): create, list,
// describe, alter (partitions) and delete topics through ZooKeeper
// (--zookeeper, ZookeeperTopicService) or the Admin API
// (--bootstrap-server, AdminClientTopicService).
//
// Owns: topics.go (options and checks as TopicCommandOptions),
// topics_zk.go (ZKTopicService: the znodes through zkutil and replica
// assignment with assign.Replicas; kafka-reassign-partitions
// --zookeeper shares it), topics_admin.go (Sarama ClusterAdmin),
// topics_describe.go (the --describe printer both back ends share).
//
// Output formats: Kafka 2.4+'s --describe ("Topic: t\tTopicId: ...\t
// PartitionCount: N\tReplicationFactor: R\tConfigs: k=v,..." then one
// TAB-indented line per partition), sorted --list, "Created topic t.",
// "Error while executing topic command : <msg>" on stdout with exit code 1.
//
// Concurrency: none of its own.
package topics
