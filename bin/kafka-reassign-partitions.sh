#!/usr/bin/env bash
# Kafka's kafka-reassign-partitions.sh: runs "samsa kafka-reassign-partitions" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-reassign-partitions "$@"
