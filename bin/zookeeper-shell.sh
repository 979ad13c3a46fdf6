#!/usr/bin/env bash
# Kafka's zookeeper-shell.sh: runs "samsa zookeeper-shell" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec zookeeper-shell "$@"
