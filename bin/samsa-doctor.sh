#!/usr/bin/env bash
# samsa doctor: checks the host and a running cluster and prints what is
# wrong and how to fix it (no Kafka counterpart). Exit code 1 when something
# is wrong.
#
#   bin/samsa-doctor.sh [--config server.properties | --log-dirs d1,d2]
#                       [--zookeeper host:port[/chroot]] [--bootstrap-server host:port]
#                       [--skip-host] [--timeout 10s]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"
samsa_exec doctor "$@"
