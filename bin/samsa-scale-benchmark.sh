#!/usr/bin/env bash
# Scale measurements of issue 18 point 3 on three Samsa broker processes
# (docs/benchmarks.md, "Cost per partition"); prints the figures, does not
# edit the docs:
#
#   bin/samsa-scale-benchmark.sh scale-idle     idle CPU, RSS and open files at 10,000
#                                               partitions; 10,000 idle connections (~3-5 min)
#   bin/samsa-scale-benchmark.sh scale-series   acks=all (or -acks 1,all) RF 3 produce/consume throughput at
#                                               6, 600, 6,000, 12,000 and 6 partitions (~5-8 min)
#
# Other arguments go to `samsa-bench scale-*` (tools/bench/scale.go), for
# example -pprof-port 23400 -profile 20s or -total-mib 128. Work files go to
# $SAMSA_SCALE_DIR (default /tmp/samsa-scale-benchmark), emptied first.
# $SAMSA_SCALE_BIN runs another samsa binary than this tree's (for example
# one built from an older commit, to measure before and after a change).
# ZooKeeper runs on port $SAMSA_SCALE_ZK_PORT (default 23281), brokers on
# 23392-23394; all are stopped at the end.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"

if [[ $# -lt 1 || ( "$1" != scale-idle && "$1" != scale-series ) ]]; then
  echo "usage: $0 scale-idle|scale-series [samsa-bench flags]" >&2
  exit 2
fi
work="${SAMSA_SCALE_DIR:-/tmp/samsa-scale-benchmark}"
zk_port="${SAMSA_SCALE_ZK_PORT:-23281}"

samsa_ensure_zookeeper
samsa_build
go_cmd="$(samsa_find_go)"
(cd "$SAMSA_HOME" && "$go_cmd" build -o .build/samsa-bench ./tools/bench && "$go_cmd" build -o .build/kfakepeer ./tools/bench/kfakepeer)

rm -rf "$work"
mkdir -p "$work/logs"
export LOG_DIR="$work/logs"

samsa_start_bench_zookeeper "$work" "$zk_port" SAMSA_SCALE_ZK_PORT

cd "$SAMSA_HOME"
.build/samsa-bench "$@" -samsa "${SAMSA_SCALE_BIN:-$SAMSA_BIN}" -zk "localhost:$zk_port" -work "$work"
