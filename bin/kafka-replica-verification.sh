#!/usr/bin/env bash
# Kafka's kafka-replica-verification.sh: runs "samsa kafka-replica-verification" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-replica-verification "$@"
