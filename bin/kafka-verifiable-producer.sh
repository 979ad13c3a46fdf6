#!/usr/bin/env bash
# Kafka's kafka-verifiable-producer.sh: runs "samsa kafka-verifiable-producer" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-verifiable-producer "$@"
