#!/usr/bin/env bash
# Sarama's own functional test suite (FVT, build tag "functional") against a
# five-broker Samsa cluster on this machine. Issue 9; docs/compatibility.md.
#
#   bin/samsa-compat-sarama.sh [--core] [--run REGEXP] [--keep] [--timeout D]
#
#   (default)     every FVT test that can run without docker
#   --core        the core wave (client, consumer, offsets, groups, admin):
#                 what CI runs (make compat-sarama-core)
#   --run REGEXP  only the top-level tests matching REGEXP (-test.run)
#   --keep        leave the cluster running after the tests (stop the
#                 brokers first: kill $(cat $SAMSA_COMPAT_DIR/logs/server-*.pid),
#                 then toxiproxy.pid and zookeeper.pid)
#   --timeout D   -test.timeout of the suite (default 20m, 8m with --core)
#
# Nothing from Sarama is stored in this repository: the script downloads
# github.com/IBM/sarama@$SARAMA_VERSION and
# github.com/Shopify/toxiproxy/v2@$TOXIPROXY_VERSION from the Go module proxy
# ("go mod download"), builds the FVT binary ("go test -c -tags functional")
# and toxiproxy's server from the module cache, then starts
#
#   ZooKeeper      127.0.0.1:$SAMSA_COMPAT_ZK_PORT (default 21818), fresh data
#   toxiproxy      API on 127.0.0.1:$SAMSA_COMPAT_TOXIPROXY_PORT (8474);
#                  proxies kafka1..kafka5: 127.0.0.1:2909N -> 127.0.0.1:909N
#   brokers 1..5   listener LOCAL on 127.0.0.1:909N advertised as
#                  127.0.0.1:2909N (clients, through toxiproxy), listener
#                  INTERNAL on 127.0.0.1:1909N (inter-broker), broker.rack=N
#                  and the docker cluster's settings (start_cluster)
#
# runs the suite with TOXIPROXY_ADDR and KAFKA_VERSION=2.8.2 (the FVT reads
# only these two and DEBUG; the bootstrap addresses 127.0.0.1:29091-29095 are
# compiled in), stops everything it started (also on Ctrl-C or failure) and
# prints one line per test: PASS, FAIL, SKIP, XFAIL (an expected failure
# listed below, with its reason) or XPASS (an expected failure that passed:
# take it off the list). The exit status is 0 when nothing outside the
# expected-failure list failed.
#
# A test that fails in the main (parallel) run runs once more, alone. Some of
# Sarama's tests race their parallel neighbours: TestFuncAdminDescribeGroups
# consumes "test.4", which other tests produce to, and a member can reach its
# 100-message cap and leave before the test checks that it is consuming
# ("expected state 2 but got 4"). One that passes alone is reported as FLAKY
# and counted apart (it does not fail the run); one that fails again is FAIL.
#
# The expected failures run last, each in its own run bounded by
# $SAMSA_COMPAT_XFAIL_TIMEOUT (default 45s): without the feature some of them
# wait forever, and a -test.timeout panic would end the whole run.
#
# SAMSA_COMPAT_BIN=<path> runs that samsa binary instead of building
# .build/samsa from the working tree.
#
# Everything lives under $SAMSA_COMPAT_DIR (default /tmp/samsa-compat-sarama):
# build/ (binaries, kept between runs), logs/ (broker, ZooKeeper, toxiproxy
# output and fvt.log), data/ (wiped at every start).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_samsa.sh"

SARAMA_VERSION="${SARAMA_VERSION:-v1.61.1}"
TOXIPROXY_VERSION="${TOXIPROXY_VERSION:-v2.12.0}"
KAFKA_VERSION="${KAFKA_VERSION:-2.8.2}"
work="${SAMSA_COMPAT_DIR:-/tmp/samsa-compat-sarama}"
zk_port="${SAMSA_COMPAT_ZK_PORT:-21818}"
toxi_port="${SAMSA_COMPAT_TOXIPROXY_PORT:-8474}"
# -test.timeout of each expected failure's own run.
xfail_timeout="${SAMSA_COMPAT_XFAIL_TIMEOUT:-45s}"

# Tests that need docker ("docker compose stop/start/logs"); skipped by name.
docker_only=(
  TestFuncAdminListConsumerGroupOffsets # docker compose stop/start kafka-N
  TestConsumerFetchFollowerFailover     # docker compose stop/start kafka-N
  TestFuncTxnProduceWithBrokerFailure   # docker compose stop/start kafka-N
  TestFuncIdempotentBufferedSequence    # greps docker compose logs
)

# Expected failures: "Test reason". Remove a line when the feature lands; the
# summary reports XPASS for a listed test that passes.
# Empty: every transaction test passes (issue 15).
expected_failures=()

# The core wave (issue 9, point 3): client metadata, coordinator, offsets,
# consumer, partial batches, multi-partition produce, the version matrices
# (also idempotent), consumer groups (fuzzy, cooperative, static
# membership) and the admin surface.
core_tests=(
  TestFuncClientMetadata TestFuncClientCoordinator
  TestFuncOffsetManager TestFuncConsumerOffsetOutOfRange TestConsumerHighWaterMarkOffset
  TestConsumerPartialBatchRecovery TestFuncMultiPartitionProduce TestFuncProducingToInvalidTopic
  TestVersionMatrix TestVersionMatrixLZ4 TestVersionMatrixZstd TestVersionMatrixIdempotent
  TestFuncConsumerGroupPartitioning TestFuncConsumerGroupPartitioningStateful
  TestFuncConsumerGroupExcessConsumers TestFuncConsumerGroupRebalanceAfterAddingPartitions
  TestFuncConsumerGroupFuzzy TestFuncConsumerGroupOffsetDeletion TestFuncConsumerGroupCooperative
  'TestFuncConsumerGroupStaticMembership_.*' TestFuncJoinGroupVersionSelection
  TestFuncAdminDescribeGroups TestFuncAdminListConsumerGroups TestFuncAdminDeleteGroup
  TestFuncAdminAlterConsumerGroupOffsets TestFuncAdminDeleteTopic
  TestFuncAdminDescribeConfig TestFuncAdminAlterConfig TestFuncAdminIncrementalAlterConfigs
  TestFuncAdminDescribeLogDirs TestFuncAdminDeleteRecords TestFuncAdminListOffsets
  TestFuncAdminElectLeadersV1 TestFuncAdminAlterPartitionReassignments TestFuncAdminQuotas
  TestFuncDescribeProducers
  TestFuncTxnProduceNoBegin TestFuncTxnCommitNoMessages TestFuncTxnProduce TestFuncTxnProduceEpochBump
  TestFuncInitProducerId3 TestFuncTxnProduceMultiTxn TestFuncTxnAbortedProduce
  # 60-90 s, nearly all of it the client's own queueing: with
  # Net.MaxOpenRequests = 1 every request on a broker connection waits for
  # the consumer's 500 ms long-poll Fetch on it, and the final loop's
  # RefreshMetadata locks each of the 5 brokers in turn (~6 s an iteration).
  TestFuncTxnProduceAndCommitOffset
)

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

mode=full run_re="" keep=0 timeout=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --core) mode=core ;;
    --run) run_re="${2:?--run needs a regexp}"; shift ;;
    --keep) keep=1 ;;
    --timeout) timeout="${2:?--timeout needs a duration}"; shift ;;
    -h | --help) usage ;;
    *) echo "error: unknown argument $1" >&2; usage ;;
  esac
  shift
done

join() { local IFS="|"; echo "$*"; }
if [[ -z "$timeout" ]]; then
  if [[ $mode == core ]]; then timeout=8m; else timeout=20m; fi
fi

build="$work/build"
logs="$work/logs"
data="$work/data"
fvt_bin="$build/sarama-fvt-$SARAMA_VERSION.test"
fvt_list="$build/sarama-fvt-$SARAMA_VERSION.tests"
toxi_bin="$build/toxiproxy-server-$TOXIPROXY_VERSION"
say() { printf '=== %s\n' "$*"; }

# module_dir <module@version>: download it from the module proxy, print its
# directory in the module cache.
module_dir() {
  local json dir
  json="$(cd "$build" && "$GO" mod download -json "$1")"
  dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
  if [[ -z "$dir" || ! -d "$dir" ]]; then
    echo "error: go mod download $1 failed:" >&2
    echo "$json" >&2
    return 1
  fi
  echo "$dir"
}

build_tools() {
  mkdir -p "$build"
  GO="$(samsa_find_go)"
  if [[ -n "${SAMSA_COMPAT_BIN:-}" ]]; then
    samsa="$SAMSA_COMPAT_BIN"
  else
    say "Building samsa"
    samsa_build
    samsa="$SAMSA_BIN"
  fi
  if [[ ! -x "$fvt_bin" || ! -s "$fvt_list" ]]; then
    say "Building Sarama $SARAMA_VERSION functional tests (go test -c -tags functional)"
    local dir
    dir="$(module_dir "github.com/IBM/sarama@$SARAMA_VERSION")"
    # The binary also holds Sarama's unit tests (mock brokers); the full run
    # selects the top-level tests of the functional_*_test.go files.
    sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' "$dir"/functional_*_test.go | sort -u >"$fvt_list"
    # The module cache copy is read-only; its go.sum lists every test
    # dependency, so the build needs no writes there.
    (cd "$dir" && "$GO" test -c -tags functional -o "$fvt_bin.tmp" .)
    mv -f "$fvt_bin.tmp" "$fvt_bin"
  fi
  if [[ ! -x "$toxi_bin" ]]; then
    say "Building toxiproxy $TOXIPROXY_VERSION server"
    local dir
    dir="$(module_dir "github.com/Shopify/toxiproxy/v2@$TOXIPROXY_VERSION")"
    (cd "$dir" && "$GO" build -o "$toxi_bin.tmp" ./cmd/server)
    mv -f "$toxi_bin.tmp" "$toxi_bin"
  fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_until() {
  local limit=$1 what=$2 i
  shift 2
  for ((i = 0; i < limit; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "error: timed out after ${limit}s waiting for $what (logs in $logs)" >&2
  return 1
}

# Pid files of the processes this script started (stop_all stops them).
started=()

# stop_pidfiles <pidfile>...: SIGTERM to all of them at once (brokers run
# their controlled shutdown in parallel), then wait up to 60 s, then SIGKILL.
stop_pidfiles() {
  local pidfile pid pids=() i
  for pidfile in "$@"; do
    [[ -f "$pidfile" ]] || continue
    pid="$(cat "$pidfile")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -s TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$pidfile"
  done
  for pid in "${pids[@]}"; do
    for ((i = 0; i < 60; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "warning: pid $pid ignored SIGTERM for 60s; sending SIGKILL" >&2
      kill -s KILL "$pid" 2>/dev/null || true
    fi
  done
}

stop_all() {
  if [[ $keep == 1 ]]; then
    echo "Cluster left running (--keep); pid files in $logs"
    return
  fi
  if [[ ${#started[@]} -gt 0 ]]; then
    say "Stopping the brokers, toxiproxy and ZooKeeper"
    stop_pidfiles "$logs"/server-*.pid
    stop_pidfiles "$logs/toxiproxy.pid"
    stop_pidfiles "$logs/zookeeper.pid"
  fi
  started=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

brokers_registered() {
  [[ "$("$samsa" zookeeper-shell "127.0.0.1:$zk_port" ls /brokers/ids 2>/dev/null)" == "[1, 2, 3, 4, 5]" ]]
}

start_cluster() {
  local p id
  for p in "$zk_port" "$toxi_port" 909{1..5} 1909{1..5} 2909{1..5}; do
    if port_open "$p"; then
      echo "error: port $p is already in use (another run, or bin/quickstart.sh?)" >&2
      exit 1
    fi
  done
  rm -rf "$data" "$logs"
  mkdir -p "$data" "$logs"
  export LOG_DIR="$logs"

  say "Starting ZooKeeper on 127.0.0.1:$zk_port"
  samsa_ensure_zookeeper
  printf 'dataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n' \
    "$data/zookeeper" "$zk_port" >"$data/zookeeper.properties"
  "$SAMSA_HOME/bin/zookeeper-server-start.sh" -daemon "$data/zookeeper.properties"
  started+=("$logs/zookeeper.pid")
  wait_until 60 "ZooKeeper on port $zk_port" port_open "$zk_port"

  say "Starting toxiproxy on 127.0.0.1:$toxi_port (proxies kafka1..kafka5)"
  {
    echo "["
    for id in 1 2 3 4 5; do
      printf '  {"name":"kafka%d","listen":"127.0.0.1:2909%d","upstream":"127.0.0.1:909%d","enabled":true}%s\n' \
        "$id" "$id" "$id" "$([[ $id == 5 ]] || echo ,)"
    done
    echo "]"
  } >"$data/toxiproxy.json"
  nohup "$toxi_bin" -host 127.0.0.1 -port "$toxi_port" -config "$data/toxiproxy.json" \
    >"$logs/toxiproxy.out" 2>&1 </dev/null &
  echo $! >"$logs/toxiproxy.pid"
  started+=("$logs/toxiproxy.pid")
  wait_until 30 "toxiproxy on port $toxi_port" port_open "$toxi_port"

  say "Starting brokers 1..5 (clients: 127.0.0.1:909N advertised as 127.0.0.1:2909N; inter-broker: 127.0.0.1:1909N)"
  for id in 1 2 3 4 5; do
    # The settings of Sarama's docker cluster (its docker-compose.yml):
    # clients use LOCAL through toxiproxy, brokers talk to each other on
    # INTERNAL, so toxics cut clients off and never replication.
    # What bin/kafka-server-start.sh -daemon does, with the binary chosen above.
    cp "$SAMSA_HOME/server.properties" "$data/server-$id.properties"
    nohup "$samsa" kafka-server-start "$data/server-$id.properties" \
      --override "broker.id=$id" \
      --override "broker.rack=$id" \
      --override "listeners=INTERNAL://127.0.0.1:1909$id,LOCAL://127.0.0.1:909$id" \
      --override "advertised.listeners=INTERNAL://127.0.0.1:1909$id,LOCAL://127.0.0.1:2909$id" \
      --override "listener.security.protocol.map=INTERNAL:PLAINTEXT,LOCAL:PLAINTEXT" \
      --override "inter.broker.listener.name=INTERNAL" \
      --override "log.dirs=$data/kafka-logs-$id" \
      --override "zookeeper.connect=127.0.0.1:$zk_port" \
      --override "zookeeper.session.timeout.ms=6000" \
      --override "auto.create.topics.enable=false" \
      --override "delete.topic.enable=true" \
      --override "default.replication.factor=2" \
      --override "offsets.topic.replication.factor=2" \
      --override "transaction.state.log.replication.factor=2" \
      --override "group.initial.rebalance.delay.ms=0" \
      >"$logs/server-$id.out" 2>&1 </dev/null &
    echo $! >"$logs/server-$id.pid"
    started+=("$logs/server-$id.pid")
  done
  wait_until 60 "brokers 1..5 to register in ZooKeeper" brokers_registered
  for id in 1 2 3 4 5; do
    wait_until 30 "proxy kafka$id" port_open "2909$id"
  done
}

# results <log>: "STATUS Test" for every top-level test of a go test -v log;
# a test that started but has no result (the binary timed out or crashed)
# is "FAIL".
results() {
  awk '
    /^=== RUN   [^ \/]+$/ { if (!($3 in done)) { started[$3] = 1; order[++n] = $3 } }
    /^    [A-Za-z0-9_]+\.go:[0-9]+: / { msg = $0; sub(/^    [^ ]+ /, "", msg) }
    /^--- (PASS|FAIL|SKIP): [^ ]+ / {
      done[$3] = $2; sub(":", "", done[$3]); if (!($3 in started)) order[++n] = $3
      if ($2 == "SKIP:") why[$3] = msg
    }
    END {
      for (i = 1; i <= n; i++) {
        t = order[i]
        if (seen[t]++) continue
        print ((t in done) ? done[t] : "FAIL"), t, why[t]
      }
    }' "$1"
}

# summarize <results file>: one line per test; returns 1 when a test outside
# the expected-failure list failed or nothing ran.
summarize() {
  local file=$1 line status name reason bad=0 n_pass=0 n_fail=0 n_skip=0 n_xfail=0 n_xpass=0 n_flaky=0
  declare -A why
  for line in "${expected_failures[@]}"; do
    why["${line%% *}"]="${line#* }"
  done
  echo
  say "Summary (Sarama $SARAMA_VERSION FVT, KAFKA_VERSION=$KAFKA_VERSION; logs in $logs)"
  while read -r status name detail; do
    reason="${why[$name]:-}"
    case "$status" in
      PASS)
        if [[ -n "$reason" ]]; then
          printf 'XPASS %s (listed as expected failure: %s; take it off the list)\n' "$name" "$reason"
          n_xpass=$((n_xpass + 1))
        else
          printf 'PASS  %s\n' "$name"
          n_pass=$((n_pass + 1))
        fi
        ;;
      FAIL)
        if [[ -n "$reason" ]]; then
          printf 'XFAIL %s (%s)\n' "$name" "$reason"
          n_xfail=$((n_xfail + 1))
        else
          printf 'FAIL  %s\n' "$name"
          n_fail=$((n_fail + 1))
          bad=1
        fi
        ;;
      FLAKY)
        printf 'FLAKY %s (failed in the parallel run, passed alone: see %s)\n' "$name" "$logs/fvt.log"
        n_flaky=$((n_flaky + 1))
        ;;
      SKIP)
        printf 'SKIP  %s%s\n' "$name" "${detail:+ ($detail)}"
        n_skip=$((n_skip + 1))
        ;;
    esac
  done <"$file"
  for name in "${docker_only[@]}"; do
    if [[ "$name" =~ $run_re ]]; then
      printf 'SKIP  %s (needs docker; skipped by name)\n' "$name"
      n_skip=$((n_skip + 1))
    fi
  done
  if [[ $((n_pass + n_fail + n_xfail + n_xpass + n_flaky)) == 0 ]]; then
    echo "FAIL  (no test ran; see $logs/fvt.log)"
    bad=1
  fi
  echo "pass $n_pass, fail $n_fail, flaky (passed alone) $n_flaky, skip $n_skip, expected failures $n_xfail, unexpected passes $n_xpass"
  return $bad
}

# run_fvt <log> <timeout> <run regexp> <skip regexp>
run_fvt() {
  (
    cd "$work"
    TOXIPROXY_ADDR="http://127.0.0.1:$toxi_port" KAFKA_VERSION="$KAFKA_VERSION" \
      "$fvt_bin" -test.v -test.timeout "$2" -test.run "$3" -test.skip "$4"
  ) >"$1" 2>&1
}

main() {
  build_tools
  if [[ -z "$run_re" ]]; then
    if [[ $mode == core ]]; then
      run_re="^($(join "${core_tests[@]}"))\$"
    else
      run_re="^($(join $(cat "$fvt_list")))\$"
    fi
  fi
  local xfail_names=() line
  for line in "${expected_failures[@]}"; do
    xfail_names+=("${line%% *}")
  done
  start_cluster

  local start rc=0 name
  start=$(date +%s)
  say "Running the FVT ($mode; log in $logs/fvt.log)"
  run_fvt "$logs/fvt.log" "$timeout" "$run_re" "^($(join "${docker_only[@]}" "${xfail_names[@]}"))\$" || rc=$?
  results "$logs/fvt.log" >"$logs/results.txt"
  local status retry=()
  while read -r status name _; do
    if [[ $status == FAIL && " ${xfail_names[*]} " != *" $name "* ]]; then
      retry+=("$name")
    fi
  done <"$logs/results.txt"
  for name in "${retry[@]}"; do
    say "Running $name again, alone (it failed in the main run)"
    run_fvt "$logs/fvt-retry-$name.log" "${SAMSA_COMPAT_RETRY_TIMEOUT:-3m}" "^$name\$" "^\$" || true
    if results "$logs/fvt-retry-$name.log" | grep -q "^PASS $name\( \|\$\)"; then
      awk -v n="$name" '$1 == "FAIL" && $2 == n { $1 = "FLAKY" } { print }' "$logs/results.txt" >"$logs/results.tmp"
      mv "$logs/results.tmp" "$logs/results.txt"
    fi
  done
  # Expected failures run one by one with a short timeout: without the
  # feature some of them wait forever (a transactional producer retries
  # FindCoordinator for minutes), and a -test.timeout panic would end the
  # whole run.
  for name in "${xfail_names[@]}"; do
    if [[ "$name" =~ $run_re ]]; then
      say "Running expected failure $name (at most $xfail_timeout)"
      run_fvt "$logs/fvt-$name.log" "$xfail_timeout" "^$name\$" "^\$" || true
      results "$logs/fvt-$name.log" | grep "^[A-Z]* $name\( \|\$\)" >>"$logs/results.txt" || echo "FAIL $name" >>"$logs/results.txt"
    fi
  done
  echo "The FVT ran for $(($(date +%s) - start)) s (main run exit status $rc)"
  summarize "$logs/results.txt"
}

main
