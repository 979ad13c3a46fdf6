// Package admin is the small Admin API query tools, each a one-shot
// request to the cluster printed as Kafka's tool prints it:
// kafka-get-offsets (GetOffsetShell, topic:partition:offset lines),
// kafka-broker-api-versions (BrokerApiVersionsCommand,
// NodeApiVersions.toString(true) blocks), kafka-delete-records
// (DeleteRecordsCommand: a JSON file in, "partition: t-p\tlow_watermark: N"
// lines out) and kafka-log-dirs (LogDirsCommand: one JSON line, keys in
// Kafka's order, brokers/dirs/partitions sorted).
//
// Owns: get_offsets.go, broker_api_versions.go, delete_records.go,
// log_dirs.go. Everything goes through Sarama (tool.NewQueryClient).
//
// Concurrency: none of its own.
package admin
