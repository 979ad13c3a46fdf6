#!/usr/bin/env bash
# Kafka's kafka-topics.sh: runs "samsa kafka-topics" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-topics "$@"
