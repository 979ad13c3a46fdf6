#!/usr/bin/env bash
# Kafka 2.8's "kafka-run-class.sh kafka.tools.GetOffsetShell" (kafka-get-offsets.sh
# since Kafka 3.0): runs "samsa kafka-get-offsets" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-get-offsets "$@"
