#!/usr/bin/env bash
# Kafka's kafka-dump-log.sh: runs "samsa kafka-dump-log" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-dump-log "$@"
