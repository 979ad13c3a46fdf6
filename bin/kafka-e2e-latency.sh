#!/usr/bin/env bash
# Kafka's "kafka-run-class.sh kafka.tools.EndToEndLatency": runs
# "samsa kafka-e2e-latency broker_list topic num_messages producer_acks
# message_size_bytes [properties_file]".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-e2e-latency "$@"
