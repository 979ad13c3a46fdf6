#!/usr/bin/env bash
# Kafka's kafka-preferred-replica-election.sh: runs "samsa kafka-preferred-replica-election" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-preferred-replica-election "$@"
