#!/usr/bin/env bash
# Kafka's kafka-delete-records.sh: runs "samsa kafka-delete-records" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-delete-records "$@"
