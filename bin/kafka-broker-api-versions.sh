#!/usr/bin/env bash
# Kafka's kafka-broker-api-versions.sh: runs "samsa kafka-broker-api-versions" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-broker-api-versions "$@"
