#!/usr/bin/env bash
# Kafka's zookeeper-server-stop.sh: send SIGTERM to ZooKeeper servers started
# by zookeeper-server-start.sh (Java processes running QuorumPeerMain).
#
#   bin/zookeeper-server-stop.sh [pattern]
#
# With pattern, only servers whose command line contains it (for example
# their properties file).
set -euo pipefail

pattern="${1:-}"
pids=()
while read -r pid args; do
  [[ -n "$pid" ]] || continue
  if [[ "$args" == *java* && "$args" == *org.apache.zookeeper.server.quorum.QuorumPeerMain* ]]; then
    if [[ -z "$pattern" || "$args" == *"$pattern"* ]]; then
      pids+=("$pid")
    fi
  fi
done < <(ps ax -o pid=,args=)

if [[ ${#pids[@]} -eq 0 ]]; then
  echo "No zookeeper server to stop"
  exit 1
fi
kill -s TERM "${pids[@]}"
