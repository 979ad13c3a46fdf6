#!/usr/bin/env bash
# Kafka's kafka-configs.sh (topics, brokers, users, clients): runs "samsa kafka-configs" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-configs "$@"
