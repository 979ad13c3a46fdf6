#!/usr/bin/env bash
# Kafka's kafka-consumer-groups.sh: runs "samsa kafka-consumer-groups" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-consumer-groups "$@"
