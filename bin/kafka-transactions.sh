#!/usr/bin/env bash
# Kafka's kafka-transactions.sh: runs "samsa kafka-transactions" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-transactions "$@"
