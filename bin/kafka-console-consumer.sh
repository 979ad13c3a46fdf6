#!/usr/bin/env bash
# Kafka's kafka-console-consumer.sh: runs "samsa kafka-console-consumer" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-console-consumer "$@"
