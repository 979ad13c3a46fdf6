#!/usr/bin/env bash
# Side-by-side benchmark: this machine's limits, then the same producer,
# consumer and end-to-end latency workloads against Samsa and against kfake
# (franz-go's in-memory fake cluster), with Sarama and franz-go clients, and
# the brokers' resident memory. Writes the generated section of
# docs/benchmarks.md and docs/benchmarks.svg (see docs/benchmarks.md).
#
#   bin/samsa-benchmark.sh            full run, 5 runs per figure (~8-10 minutes)
#   bin/samsa-benchmark.sh --quick    1 run per figure, fewer records (~3 minutes)
#
# Other arguments go to `samsa-bench run` (tools/bench/main.go), for example
# --systems samsa or --repeats 5.
#
# Transactions (issue 15) are measured on every cluster by default, side by
# side with their baselines (tools/bench/txn.go): kgo transactions of 1,000
# x 100 B records against an idempotent producer flushing the same rounds,
# Sarama's perf tool with --transaction-duration-ms against
# enable.idempotence=true, and read_committed against read_uncommitted reads
# of the same committed transactions. -txn=false leaves them out; a quick
# look at them alone:
#
#   bin/samsa-benchmark.sh --quick -txn-only -systems samsa -out /tmp/txn.md -svg /tmp/txn.svg Work files (configs, log dirs, process
# output) go to $SAMSA_BENCH_DIR (default /tmp/samsa-benchmark), emptied
# first. ZooKeeper runs on port $SAMSA_BENCH_ZK_PORT (default 23181), Samsa
# brokers on 23092-23094 and kfake on 23192-23194; all are stopped at the end.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"

work="${SAMSA_BENCH_DIR:-/tmp/samsa-benchmark}"
zk_port="${SAMSA_BENCH_ZK_PORT:-23181}"
args=()
for a in "$@"; do
  case "$a" in
    --quick) args+=(-quick) ;;
    *) args+=("$a") ;;
  esac
done

samsa_ensure_zookeeper
samsa_build
go_cmd="$(samsa_find_go)"
(cd "$SAMSA_HOME" && "$go_cmd" build -o .build/samsa-bench ./tools/bench && "$go_cmd" build -o .build/kfakepeer ./tools/bench/kfakepeer)

rm -rf "$work"
mkdir -p "$work/logs"
export LOG_DIR="$work/logs"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if port_open "$zk_port"; then
  echo "error: port $zk_port is in use; set SAMSA_BENCH_ZK_PORT" >&2
  exit 1
fi
printf 'dataDir=%s/zookeeper\nclientPort=%s\nmaxClientCnxns=0\nadmin.enableServer=false\n' "$work" "$zk_port" >"$work/zookeeper.properties"
"$SAMSA_HOME/bin/zookeeper-server-start.sh" -daemon "$work/zookeeper.properties"
stop_zk() {
  local pid
  pid="$(cat "$LOG_DIR/zookeeper.pid" 2>/dev/null || true)"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill -s TERM "$pid"
    for _ in $(seq 1 30); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
  fi
}
trap stop_zk EXIT
for i in $(seq 1 60); do
  port_open "$zk_port" && break
  if [[ $i == 60 ]]; then
    echo "error: ZooKeeper did not open port $zk_port (see $LOG_DIR/zookeeper.out)" >&2
    exit 1
  fi
  sleep 1
done

cd "$SAMSA_HOME"
.build/samsa-bench run -samsa "$SAMSA_BIN" -kfakepeer .build/kfakepeer -zk "localhost:$zk_port" -work "$work" \
  -out docs/benchmarks.md -svg docs/benchmarks.svg "${args[@]}"
