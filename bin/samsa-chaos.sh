#!/usr/bin/env bash
# Samsa's reliability harness (issue 17, docs/reliability.md): a 3-server
# ZooKeeper ensemble and 3-5 brokers, each in its own network namespace,
# a recorded workload, seeded faults and a history checker.
#
#   bin/samsa-chaos.sh --help              every nemesis and option
#   bin/samsa-chaos.sh --short --seed 7    the CI run (< 4 minutes)
#   bin/samsa-chaos.sh --cycles 100        the long matrix
#   bin/samsa-chaos.sh --cleanup           remove a crashed run's leftovers
#
# Needs root (ip netns, iptables, mount); installs iptables and ZooKeeper
# when missing. Work files go to $SAMSA_CHAOS_DIR (default /tmp/samsa-chaos).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"

for a in "$@"; do
  case "$a" in
    -h|--help|-help)
      go_cmd="$(samsa_find_go)"
      (cd "$SAMSA_HOME" && "$go_cmd" build -o .build/samsa-chaos ./tools/chaos)
      exec "$SAMSA_HOME/.build/samsa-chaos" --help ;;
  esac
done

samsa_ensure_zookeeper
if ! command -v iptables >/dev/null 2>&1; then
  echo "Installing iptables (apt-get install -y iptables)..." >&2
  samsa_as_root apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive samsa_as_root apt-get install -y -q iptables >&2
fi
samsa_build
go_cmd="$(samsa_find_go)"
(cd "$SAMSA_HOME" && "$go_cmd" build -o .build/samsa-chaos ./tools/chaos)
exec "$SAMSA_HOME/.build/samsa-chaos" --samsa "$SAMSA_BIN" --work "${SAMSA_CHAOS_DIR:-/tmp/samsa-chaos}" "$@"
