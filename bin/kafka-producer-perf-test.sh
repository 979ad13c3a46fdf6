#!/usr/bin/env bash
# Kafka's kafka-producer-perf-test.sh: runs "samsa kafka-producer-perf-test" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-producer-perf-test "$@"
