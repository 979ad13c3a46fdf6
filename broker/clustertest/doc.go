// Package clustertest holds Samsa's cluster and client-compatibility tests:
// several real brokers (in-process through broker/brokertest, or child
// processes through brokertest.NewProcCluster) on 127.0.0.1:0 around a real
// ZooKeeper (zkutil/zktest), driven by real clients (Sarama, franz-go kgo
// and kadm, kcat, kafka-python, confluent-kafka-python, KafkaJS). The package has no code of its own: every
// file but this one is a _test.go file. The single-broker, request-level
// tests of the handlers (TestAPI..., the fuzz target, the benchmarks) stay
// beside the handlers in package broker.
//
// What is where:
//
//   - cluster_*_test.go (TestCluster...): controller, ISR, reassignment,
//     groups, transactions, security, metrics, rolling restarts, log dirs.
//   - cluster_fault*_test.go (TestClusterFault..., TestClusterFault2...,
//     TestClusterFenced...): faults on broker processes (SIGKILL, SIGSTOP,
//     ZooKeeper cut, frozen or restarted, full or torn disks), each checked
//     for lost or duplicated acknowledged records; shared checkers in
//     cluster_helpers_*_test.go.
//   - compat_*_test.go (TestCompat...): one client each against a cluster;
//     kcat helpers in compat_helpers_kcat_test.go, kafka-python scripts in
//     testdata/compat_kafka_python*.py, the confluent-kafka-python and
//     KafkaJS scripts in testdata/compat_confluent_kafka.py and
//     testdata/compat_kafkajs.js.
//
// The shared test helpers both this package and package broker's tests use
// (a raw Kafka connection, one-request helpers, the metrics scrape, the
// TLS/SASL cluster) are exported by broker/brokertest.
//
// Running: one package, one ZooKeeper per test binary (TestMain).
//
//	go test -p 1 -run 'TestClusterISR' ./broker/clustertest/
//	go test -p 1 -run '^TestCompat' ./broker/clustertest/
//
// `make test` runs the fault tests (FAULT_TESTS, ^TestCluster(Fault|Fenced))
// of this package in their own `go test` process beside the other passes and
// skips them in the race pass (their brokers are child processes built
// without -race); the rest runs in the normal and race passes.
//
// Environment:
//
//   - CI=1: a missing kcat, kafka-python (python3-kafka),
//     confluent-kafka-python (python3-confluent-kafka) or KafkaJS fails the
//     test instead of skipping it.
//   - SAMSA_KAFKAJS_MODULES=dir: the node_modules holding kafkajs (default
//     the repository's .build/node/node_modules, where .ci/install-deps.sh
//     puts it).
//   - SAMSA_SCALE_PARTITIONS=N (SAMSA_SCALE_LOG_DIR=dir keeps the logs):
//     runs the scale measurements TestClusterScale...; skipped otherwise.
//   - SAMSA_REPLICATION_PERF=records (SAMSA_REPLICATION_PERF_PARTITIONS):
//     runs TestClusterFaultProducerPerf; skipped otherwise.
//   - SAMSA_NEMESIS_SEED, SAMSA_NEMESIS_FAULTS: TestClusterFault2Nemesis's
//     seed (default 1) and fault count (default 6).
//   - SAMSA_EOS_RECORDS: records per run of the exactly-once fault test
//     (default 5000).
//   - SAMSA_TEST_LOG=debug|info: broker log level of the in-process
//     harness (default warn).
package clustertest
