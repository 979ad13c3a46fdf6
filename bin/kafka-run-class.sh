#!/usr/bin/env bash
# Kafka's kafka-run-class.sh for the tool classes Samsa implements: maps the
# Java class name to the samsa subcommand and passes the other arguments on,
# e.g. "kafka-run-class.sh kafka.tools.EndToEndLatency h:9092 t 1000 1 100".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
if [[ $# -lt 1 ]]; then
  echo "USAGE: $0 [-daemon] [-name servicename] [-loggc] classname [opts]" >&2
  exit 1
fi
class="$1"
shift
case "$class" in
  kafka.tools.EndToEndLatency) cmd=kafka-e2e-latency ;;
  kafka.tools.GetOffsetShell) cmd=kafka-get-offsets ;;
  kafka.tools.DumpLogSegments) cmd=kafka-dump-log ;;
  kafka.tools.ConsumerPerformance) cmd=kafka-consumer-perf-test ;;
  org.apache.kafka.tools.ProducerPerformance) cmd=kafka-producer-perf-test ;;
  kafka.tools.ConsoleProducer) cmd=kafka-console-producer ;;
  kafka.tools.ConsoleConsumer) cmd=kafka-console-consumer ;;
  kafka.admin.BrokerApiVersionsCommand) cmd=kafka-broker-api-versions ;;
  kafka.admin.DeleteRecordsCommand) cmd=kafka-delete-records ;;
  kafka.admin.LogDirsCommand) cmd=kafka-log-dirs ;;
  kafka.admin.TopicCommand) cmd=kafka-topics ;;
  kafka.admin.ConfigCommand) cmd=kafka-configs ;;
  kafka.admin.ZkSecurityMigrator) cmd=zookeeper-security-migration ;;
  kafka.admin.ConsumerGroupCommand) cmd=kafka-consumer-groups ;;
  kafka.admin.ReassignPartitionsCommand) cmd=kafka-reassign-partitions ;;
  kafka.admin.LeaderElectionCommand) cmd=kafka-leader-election ;;
  kafka.admin.PreferredReplicaLeaderElectionCommand) cmd=kafka-preferred-replica-election ;;
  kafka.tools.ReplicaVerificationTool) cmd=kafka-replica-verification ;;
  org.apache.kafka.tools.VerifiableProducer) cmd=kafka-verifiable-producer ;;
  org.apache.kafka.tools.VerifiableConsumer) cmd=kafka-verifiable-consumer ;;
  kafka.Kafka) cmd=kafka-server-start ;;
  *)
    echo "Error: Could not find or load main class $class" >&2
    exit 1
    ;;
esac
samsa_exec "$cmd" "$@"
