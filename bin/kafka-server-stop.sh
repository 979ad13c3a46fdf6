#!/usr/bin/env bash
# Kafka's kafka-server-stop.sh: send SIGTERM to running samsa brokers, which
# then shut down in order (controlled shutdown, logs flushed).
#
#   bin/kafka-server-stop.sh [pattern]
#
# Like Kafka's script it finds brokers by process search: every
# "samsa kafka-server-start" process, or only those whose command line
# contains pattern (for example the properties file of one broker).
set -euo pipefail

pattern="${1:-}"
pids=()
while read -r pid exe sub rest; do
  [[ -n "$pid" ]] || continue
  if [[ "$exe" == */samsa && "$sub" == kafka-server-start ]]; then
    if [[ -z "$pattern" || "$exe $sub $rest" == *"$pattern"* ]]; then
      pids+=("$pid")
    fi
  fi
done < <(ps ax -o pid=,args=)

if [[ ${#pids[@]} -eq 0 ]]; then
  echo "No kafka server to stop"
  exit 1
fi
kill -s TERM "${pids[@]}"
