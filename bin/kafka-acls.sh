#!/usr/bin/env bash
# Kafka's kafka-acls.sh (ACLs in ZooKeeper or through a broker): runs "samsa kafka-acls" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec kafka-acls "$@"
