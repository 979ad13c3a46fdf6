#!/usr/bin/env bash
# Kafka's zookeeper-server-start.sh, running Debian's ZooKeeper (installed
# with apt-get when missing).
#
#   bin/zookeeper-server-start.sh [-daemon] zookeeper.properties
#
# With -daemon ZooKeeper runs in the background, output in
# $LOG_DIR/zookeeper.out and pid in $LOG_DIR/zookeeper.pid (LOG_DIR defaults
# to <repo>/logs).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"

if [[ $# -lt 1 ]]; then
  echo "USAGE: $0 [-daemon] zookeeper.properties" >&2
  exit 1
fi
daemon=0
if [[ "$1" == "-daemon" ]]; then
  daemon=1
  shift
fi
if [[ $# -lt 1 ]]; then
  echo "USAGE: $0 [-daemon] zookeeper.properties" >&2
  exit 1
fi
props="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"

samsa_ensure_zookeeper
log_dir="$(samsa_log_dir)"
log4j=/etc/zookeeper/conf/log4j.properties
[[ -f "$log4j" ]] || log4j=/etc/zookeeper/conf_example/log4j.properties
cmd=(java -Xmx512M -Xms128M -Djava.awt.headless=true
  "-Dlog4j.configuration=file:$log4j" -Dzookeeper.root.logger=INFO,CONSOLE "-Dzookeeper.log.dir=$log_dir"
  -cp /usr/share/java/zookeeper.jar org.apache.zookeeper.server.quorum.QuorumPeerMain "$props")

if [[ $daemon == 0 ]]; then
  exec "${cmd[@]}"
fi
nohup "${cmd[@]}" >"$log_dir/zookeeper.out" 2>&1 </dev/null &
echo $! >"$log_dir/zookeeper.pid"
