#!/usr/bin/env bash
# Kafka's kafka-consumer-perf-test.sh: runs "samsa kafka-consumer-perf-test" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-consumer-perf-test "$@"
