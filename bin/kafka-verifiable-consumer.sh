#!/usr/bin/env bash
# Kafka's kafka-verifiable-consumer.sh: runs "samsa kafka-verifiable-consumer" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-verifiable-consumer "$@"
