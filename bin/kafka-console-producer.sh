#!/usr/bin/env bash
# Kafka's kafka-console-producer.sh: runs "samsa kafka-console-producer" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-console-producer "$@"
