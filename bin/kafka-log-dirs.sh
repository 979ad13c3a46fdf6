#!/usr/bin/env bash
# Kafka's kafka-log-dirs.sh: runs "samsa kafka-log-dirs" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-log-dirs "$@"
