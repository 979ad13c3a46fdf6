#!/usr/bin/env bash
# Kafka's zookeeper-security-migration.sh (ZkSecurityMigrator): runs "samsa zookeeper-security-migration" with the same arguments.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec zookeeper-security-migration "$@"
