#!/usr/bin/env bash
# Side-by-side benchmark: this machine's limits, then the same producer,
# consumer and end-to-end latency workloads against Samsa and against kfake
# (franz-go's in-memory fake cluster), with Sarama and franz-go clients, and
# the brokers' resident memory. Writes the generated section of
# docs/benchmarks.md and docs/benchmarks.svg (see docs/benchmarks.md).
#
#   bin/samsa-benchmark.sh            full run, 5 runs per figure (~8-10 minutes)
#   bin/samsa-benchmark.sh --quick    1 run per figure, fewer records (~3 minutes)
#   bin/samsa-benchmark.sh --security-only   only the security section below
#   bin/samsa-benchmark.sh --no-security     skip it
#
# Security section (issue 16): TLS vs plaintext produce and consume of 1 KiB
# records (BenchmarkSecurityTLSvsPlaintext: one broker, both listeners) and
# produce latency p99 without an authorizer and with 1,000 ACLs
# (BenchmarkAPIProduceAuthzInterleaved: both brokers in one process, their
# requests alternating one by one), all in
# one `go test` process per round, $SAMSA_BENCH_SECURITY_ROUNDS rounds
# (default 3, 1 with --quick) so the ratios are measured side by side under
# the same load; the per-round ratios and their medians replace the
# security block of docs/benchmarks.md.
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
quick=0 security=1 main=1
for a in "$@"; do
  case "$a" in
    --quick) args+=(-quick); quick=1 ;;
    --security-only) main=0 ;;
    --no-security) security=0 ;;
    *) args+=("$a") ;;
  esac
done

samsa_ensure_zookeeper
samsa_build
go_cmd="$(samsa_find_go)"

# security_section runs the issue 16 benchmarks and rewrites the block
# between the samsa-security-benchmark markers of docs/benchmarks.md.
security_section() {
  local rounds="${SAMSA_BENCH_SECURITY_ROUNDS:-3}" out="$work/security-bench.txt" r
  [[ $quick == 1 ]] && rounds=1
  : >"$out"
  for r in $(seq 1 "$rounds"); do
    echo "security benchmarks: round $r of $rounds" >&2
    # TLS by time (each op is 100 KiB), the produce latencies by count.
    (cd "$SAMSA_HOME" && nice -n 5 "$go_cmd" test -p 1 -run '^$' -count=1 -timeout 20m \
      -bench 'BenchmarkSecurityTLSvsPlaintext$' -benchtime=1s ./broker/ &&
      nice -n 5 "$go_cmd" test -p 1 -run '^$' -count=1 -timeout 20m \
      -bench 'BenchmarkAPIProduceAuthzInterleaved$' -benchtime=10000x ./broker/) |
      grep '^Benchmark' | sed "s/^/round=$r /" >>"$out"
  done
  local block
  block="$(awk -v rounds="$rounds" -v load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" -v cores="$(nproc 2>/dev/null)" '
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function metric(unit,   i) { for (i = 1; i <= NF; i++) if ($(i + 1) == unit) return $i; return "" }
    {
      split($1, kv, "="); r = kv[2]
      name = $2; sub(/-[0-9]+$/, "", name)
      if (name ~ /TLSvsPlaintext\//) mbs[name, r] = metric("MB/s")
      if (name == "BenchmarkAPIProduceAuthzInterleaved") {
        p99[0, r] = metric("plain-p99-µs"); p50[0, r] = metric("plain-p50-µs")
        p99[1, r] = metric("authz-p99-µs"); p50[1, r] = metric("authz-p50-µs")
      }
    }
    END {
      print "### Security (issue 16; `bin/samsa-benchmark.sh`, " rounds " round(s), each one `go test` process)"
      print ""
      print "Machine: " cores " cores, load average " load " at the end (shared with other work: the ratios, measured"
      print "side by side in each round, are what to read; absolute figures move with the load)."
      print ""
      print "| round | TLS produce / plaintext | TLS consume / plaintext | produce p99 no authorizer (µs) | produce p99 1,000 ACLs (µs) | p99 ratio | p50 ratio |"
      print "|---|---|---|---|---|---|---|"
      for (r = 1; r <= rounds; r++) {
        tp = mbs["BenchmarkSecurityTLSvsPlaintext/Produce/SSL", r] / mbs["BenchmarkSecurityTLSvsPlaintext/Produce/PLAINTEXT", r]
        tc = mbs["BenchmarkSecurityTLSvsPlaintext/Consume/SSL", r] / mbs["BenchmarkSecurityTLSvsPlaintext/Consume/PLAINTEXT", r]
        pr = p99[1, r] / p99[0, r]; qr = p50[1, r] / p50[0, r]
        TP[r] = tp; TC[r] = tc; PR[r] = pr; QR[r] = qr
        printf "| %d | %.2fx | %.2fx | %.0f | %.0f | %.2f | %.2f |\n", r, tp, tc, p99[0, r], p99[1, r], pr, qr
      }
      printf "| median | %.2fx | %.2fx | | | %.2f | %.2f |\n", median(TP, rounds), median(TC, rounds), median(PR, rounds), median(QR, rounds)
      print ""
      print "Targets: TLS produce >= 0.6x and consume >= 0.5x plaintext (1 KiB records); 1,000 ACLs add <= 5 % to"
      print "produce p99 (ratio <= 1.05). Produce: 10,000 requests of 100 x 100 B, acks=1, to each of two one-broker"
      print "clusters in one process (no authorizer; AclAuthorizer with 1,000 ACLs), alternating request by request"
      print "(BenchmarkAPIProduceAuthzInterleaved), so load from other processes falls on both sides alike."
    }' "$out")"
  echo "$block"
  local doc="$SAMSA_HOME/docs/benchmarks.md"
  if grep -q '<!-- samsa-security-benchmark:begin' "$doc"; then
    awk -v block="$block" '
      /<!-- samsa-security-benchmark:begin/ { print; print block; skip = 1; next }
      /<!-- samsa-security-benchmark:end/ { skip = 0 }
      !skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
  fi
}
(cd "$SAMSA_HOME" && "$go_cmd" build -o .build/samsa-bench ./tools/bench && "$go_cmd" build -o .build/kfakepeer ./tools/bench/kfakepeer)

rm -rf "$work"
mkdir -p "$work/logs"
export LOG_DIR="$work/logs"

if [[ $main == 0 ]]; then
  [[ $security == 1 ]] && security_section
  exit 0
fi

samsa_start_bench_zookeeper "$work" "$zk_port" SAMSA_BENCH_ZK_PORT

cd "$SAMSA_HOME"
.build/samsa-bench run -samsa "$SAMSA_BIN" -kfakepeer .build/kfakepeer -zk "localhost:$zk_port" -work "$work" \
  -out docs/benchmarks.md -svg docs/benchmarks.svg "${args[@]}"
[[ $security == 1 ]] && security_section
exit 0
