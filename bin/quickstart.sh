#!/usr/bin/env bash
# Samsa quickstart: a ZooKeeper and a three-broker cluster on this machine.
#
#   bin/quickstart.sh [start]   install what is missing, start ZooKeeper on 2181
#                               and brokers 1-3 on ports 9092-9094, create a
#                               topic, round-trip a message, describe the topic
#   bin/quickstart.sh stop      stop the brokers, then ZooKeeper
#
# Everything lives under $SAMSA_QUICKSTART_DIR (default /tmp/samsa-quickstart):
# generated configs, log dirs, ZooKeeper data, logs and pid files. "start"
# begins from an empty directory; "stop" leaves the data in place.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"

work="${SAMSA_QUICKSTART_DIR:-/tmp/samsa-quickstart}"
topic="quickstart-events"
bootstrap="localhost:9092"
export LOG_DIR="$work/logs"

say() { printf '\n=== %s\n' "$*"; }

# wait_until <seconds> <description> <command...>: poll the command once a
# second until it succeeds; fail after the given time.
wait_until() {
  local limit=$1 what=$2
  shift 2
  local i
  for ((i = 0; i < limit; i++)); do
    if "$@" >/dev/null 2>&1; then
      return 0
    fi
    sleep 1
  done
  echo "error: timed out after ${limit}s waiting for $what (logs in $LOG_DIR)" >&2
  return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_pid <pidfile> <name>: SIGTERM, then wait up to 60 s for the exit.
stop_pid() {
  local pidfile=$1 name=$2
  if ! pid_alive "$pidfile"; then
    rm -f "$pidfile"
    return 0
  fi
  local pid
  pid="$(cat "$pidfile")"
  echo "Stopping $name (pid $pid)"
  kill -s TERM "$pid"
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "warning: $name (pid $pid) did not stop within 60s" >&2
    return 1
  fi
  rm -f "$pidfile"
}

stop_all() {
  local id
  for id in 3 2 1; do
    stop_pid "$LOG_DIR/server-$id.pid" "broker $id"
  done
  stop_pid "$LOG_DIR/zookeeper.pid" "ZooKeeper"
  echo "Stopped. Data is kept in $work."
}

brokers_registered() {
  local ids
  ids="$("$SAMSA_BIN" zookeeper-shell localhost:2181 ls /brokers/ids 2>/dev/null)"
  [[ "$ids" == "[1, 2, 3]" ]]
}

topic_has_leaders() {
  local out
  out="$("$SAMSA_BIN" kafka-topics --bootstrap-server "$bootstrap" --describe --topic "$topic" 2>/dev/null)"
  [[ "$(grep -c $'\tLeader: [0-9]' <<<"$out")" == 3 ]]
}

start_all() {
  for pidfile in "$LOG_DIR"/*.pid; do
    if pid_alive "$pidfile"; then
      echo "error: the quickstart is already running ($pidfile); run '$0 stop' first" >&2
      exit 1
    fi
  done 2>/dev/null

  say "Checking prerequisites"
  samsa_ensure_zookeeper
  if ! samsa_find_go >/dev/null 2>&1; then
    samsa_install_go
  fi
  echo "Building $SAMSA_BIN"
  samsa_build

  rm -rf "$work"
  mkdir -p "$work" "$LOG_DIR"

  say "Starting ZooKeeper on localhost:2181"
  if port_open 2181; then
    echo "Something already listens on 2181; using it as ZooKeeper."
  else
    sed "s|^dataDir=.*|dataDir=$work/zookeeper|" "$SAMSA_HOME/config/zookeeper.properties" >"$work/zookeeper.properties"
    "$SAMSA_HOME/bin/zookeeper-server-start.sh" -daemon "$work/zookeeper.properties"
    wait_until 60 "ZooKeeper on port 2181" port_open 2181
  fi

  say "Starting brokers 1, 2 and 3 on ports 9092, 9093 and 9094"
  local id
  for id in 1 2 3; do
    local props="$work/server-$id.properties"
    {
      cat "$SAMSA_HOME/server.properties"
      echo
      echo "# Quickstart overrides for broker $id (later keys win)."
      echo "broker.id=$id"
      echo "listeners=PLAINTEXT://localhost:$((9091 + id))"
      echo "log.dirs=$work/kafka-logs-$id"
      echo "offsets.topic.replication.factor=3"
    } >"$props"
    "$SAMSA_HOME/bin/kafka-server-start.sh" -daemon "$props"
    echo "broker $id: config $props, output $LOG_DIR/server-$id.out"
  done
  wait_until 60 "brokers 1-3 to register in ZooKeeper" brokers_registered
  echo "Registered brokers: $("$SAMSA_BIN" zookeeper-shell localhost:2181 ls /brokers/ids)"

  say "Creating topic $topic (3 partitions, replication factor 3)"
  "$SAMSA_HOME/bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --create --topic "$topic" \
    --partitions 3 --replication-factor 3
  wait_until 60 "leaders for every partition of $topic" topic_has_leaders

  say "Producing one message and consuming it back"
  local msg
  msg="hello from samsa at $(date -u +%H:%M:%S)"
  echo "$msg" | "$SAMSA_HOME/bin/kafka-console-producer.sh" --bootstrap-server "$bootstrap" --topic "$topic" \
    --request-required-acks all
  local got
  got="$("$SAMSA_HOME/bin/kafka-console-consumer.sh" --bootstrap-server "$bootstrap" --topic "$topic" \
    --from-beginning --max-messages 1 --timeout-ms 30000)"
  echo "sent:     $msg"
  echo "received: $got"
  if [[ "$got" != "$msg" ]]; then
    echo "error: the message did not come back" >&2
    exit 1
  fi

  say "bin/kafka-topics.sh --bootstrap-server $bootstrap --describe --topic $topic"
  "$SAMSA_HOME/bin/kafka-topics.sh" --bootstrap-server "$bootstrap" --describe --topic "$topic"

  say "The cluster is running"
  cat <<EOT
Try:
  bin/kafka-console-producer.sh --bootstrap-server $bootstrap --topic $topic
  bin/kafka-console-consumer.sh --bootstrap-server $bootstrap --topic $topic --from-beginning
  bin/kafka-topics.sh --zookeeper localhost:2181 --describe
Logs: $LOG_DIR
Stop everything with: $0 stop
EOT
}

case "${1:-start}" in
  start) start_all ;;
  stop) stop_all ;;
  *)
    echo "USAGE: $0 [start|stop]" >&2
    exit 1
    ;;
esac
