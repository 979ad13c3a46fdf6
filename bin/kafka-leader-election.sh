#!/usr/bin/env bash
# Kafka's kafka-leader-election.sh: runs "samsa kafka-leader-election" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-leader-election "$@"
