#!/usr/bin/env bash
# Kafka's kafka-server-start.sh: run a broker.
#
#   bin/kafka-server-start.sh [-daemon] server.properties [--override property=value]*
#
# In the foreground the script execs the broker, which keeps the script's
# pid. With -daemon the broker runs in the background; its output goes to
# $LOG_DIR/<name>.out and its pid to $LOG_DIR/<name>.pid, where <name> is the
# properties file name without ".properties" (LOG_DIR defaults to
# <repo>/logs), and the log lines are also appended to $LOG_DIR/server.log,
# as Kafka's log4j writes both.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"

if [[ $# -lt 1 ]]; then
  echo "USAGE: $0 [-daemon] server.properties [--override property=value]*" >&2
  exit 1
fi
daemon=0
if [[ "$1" == "-daemon" ]]; then
  daemon=1
  shift
fi
if [[ $# -lt 1 ]]; then
  echo "USAGE: $0 [-daemon] server.properties [--override property=value]*" >&2
  exit 1
fi

samsa_build
if [[ $daemon == 0 ]]; then
  exec "$SAMSA_BIN" kafka-server-start "$@"
fi

log_dir="$(samsa_log_dir)"
name="$(basename "$1" .properties)"
SAMSA_LOG_FILE="$log_dir/server.log" nohup "$SAMSA_BIN" kafka-server-start "$@" >"$log_dir/$name.out" 2>&1 </dev/null &
echo $! >"$log_dir/$name.pid"
