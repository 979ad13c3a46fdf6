# Shared helper for the bin/ scripts; source it, do not run it.
#
# Defines SAMSA_HOME (the repository root), SAMSA_BIN (<repo>/.build/samsa),
# samsa_build (builds SAMSA_BIN when it is missing or older than any Go source,
# go.mod or go.sum), samsa_exec (builds, then replaces the shell with
# "samsa <subcommand> args..."), samsa_log_dir, and for the benchmark scripts
# samsa_start_bench_zookeeper / samsa_stop_bench_zookeeper.

SAMSA_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SAMSA_BIN="$SAMSA_HOME/.build/samsa"

samsa_find_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then
    echo /usr/local/go/bin/go
  elif [[ -x "$SAMSA_HOME/.build/go/bin/go" ]]; then
    echo "$SAMSA_HOME/.build/go/bin/go"
  else
    echo "error: the Go toolchain is needed to build samsa (bin/quickstart.sh installs it; see docs/quickstart.md)" >&2
    return 1
  fi
}

# samsa_install_go explains how to get a toolchain when none is found. Samsa
# does not download toolchains itself: the machines it targets ship Go in
# /usr/local/go, and Debian's golang-go (1.19 in bookworm) is too old for the
# module.
samsa_install_go() {
  local version
  version="$(awk '$1 == "go" {print $2; exit}' "$SAMSA_HOME/go.mod")"
  echo "error: Go $version or newer is needed to build samsa; install it (for example into /usr/local/go) and run this again" >&2
  return 1
}

samsa_build() {
  local stale=""
  if [[ -x "$SAMSA_BIN" ]]; then
    stale="$(find "$SAMSA_HOME" \( -name .git -o -name .build -o -name testdata \) -prune -o \
      \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$SAMSA_BIN" -print -quit)"
  fi
  if [[ ! -x "$SAMSA_BIN" || -n "$stale" ]]; then
    local go_cmd tmp
    go_cmd="$(samsa_find_go)"
    mkdir -p "$SAMSA_HOME/.build"
    # Build to a private file and rename, so concurrent scripts never run a
    # half-written binary.
    tmp="$SAMSA_BIN.$$.tmp"
    (cd "$SAMSA_HOME" && "$go_cmd" build -o "$tmp" ./tools/samsa)
    mv -f "$tmp" "$SAMSA_BIN"
  fi
}

samsa_exec() {
  samsa_build
  exec "$SAMSA_BIN" "$@"
}

# samsa_log_dir prints LOG_DIR (default <repo>/logs, as Kafka's scripts) and
# creates it.
samsa_log_dir() {
  local dir="${LOG_DIR:-$SAMSA_HOME/logs}"
  mkdir -p "$dir"
  echo "$dir"
}

# samsa_as_root runs a command as root (directly, or with sudo).
samsa_as_root() {
  if [[ "$(id -u)" == 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "error: need root to run: $*" >&2
    return 1
  fi
}

# samsa_ensure_zookeeper installs Debian's zookeeper package when its jar is
# missing.
samsa_ensure_zookeeper() {
  if [[ ! -f /usr/share/java/zookeeper.jar ]] || ! command -v java >/dev/null 2>&1; then
    echo "Installing ZooKeeper (apt-get install -y zookeeper)..." >&2
    samsa_as_root apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive samsa_as_root apt-get install -y -q zookeeper >&2
  fi
}

# samsa_port_open PORT succeeds when something accepts connections on
# 127.0.0.1:PORT.
samsa_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# samsa_start_bench_zookeeper WORK PORT PORT_VAR starts a throwaway ZooKeeper
# for a benchmark script (data in WORK/zookeeper, output in $LOG_DIR, which
# must be set), stops it when the script exits (an EXIT trap) and waits up
# to 60 s for its port. PORT_VAR names the variable that chooses the port,
# for the error when the port is taken.
samsa_start_bench_zookeeper() {
  local work="$1" port="$2" port_var="$3" i
  if samsa_port_open "$port"; then
    echo "error: port $port is in use; set $port_var" >&2
    return 1
  fi
  printf 'dataDir=%s/zookeeper\nclientPort=%s\nmaxClientCnxns=0\nadmin.enableServer=false\n' "$work" "$port" >"$work/zookeeper.properties"
  "$SAMSA_HOME/bin/zookeeper-server-start.sh" -daemon "$work/zookeeper.properties"
  trap samsa_stop_bench_zookeeper EXIT
  for i in $(seq 1 60); do
    samsa_port_open "$port" && return 0
    sleep 1
  done
  echo "error: ZooKeeper did not open port $port (see $LOG_DIR/zookeeper.out)" >&2
  return 1
}

# samsa_stop_bench_zookeeper stops the ZooKeeper samsa_start_bench_zookeeper
# started (TERM, then up to 30 s for it to exit).
samsa_stop_bench_zookeeper() {
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
