#!/usr/bin/env bash
# `skills mcp --http` against rmcp's own folder-catalog server, side by side,
# on the same folder of skills, with wrk as the load generator.
#
#   bash scripts/mcp-http-bench.sh [SKILLS_DIR]      (default: examples/skills)
#
# Both servers come from crates/skills-mcp/examples/bench_server.rs (release
# build): `ours` is SkillsServer on the filesystem provider behind
# HttpServer, what `skills mcp --http` runs; `rmcp` is rmcp's SkillCatalog
# behind rmcp's StreamableHttpService, on the same hyper HTTP/1 server with
# TCP_NODELAY. Each wrk thread drives its own session (initialize first).
#
# Three loads, each run on both servers in turn, ROUNDS times (alternating,
# so drift in the machine's load hits both):
#   1. resources/read, one request at a time (wrk -t1 -c1): the latency;
#   2. resources/read, 16 connections on 2 threads: the throughput;
#   3. skills/get, the same 16 connections.
# Each line: requests per second, wrk's p50 and p99 latency, and the
# server's CPU time per request (user + system, from /proc/PID/stat), which
# a machine shared with other work disturbs much less than the rates.
# Then a flood: FLOOD_SECONDS of `initialize` requests with no session (16
# connections), and each server's resident memory before and after.
# Environment: SECONDS_PER_RUN (default 10), ROUNDS (default 2),
# FLOOD_SECONDS (default 10; 0 skips it), READ_URI / GET_URI to pick other
# files.
set -euo pipefail

cd "$(dirname "$0")/.."
DIR=${1:-examples/skills}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
ROUNDS=${ROUNDS:-2}
FLOOD_SECONDS=${FLOOD_SECONDS:-10}
READ_URI=${READ_URI:-skill://csv-insights/references/interpreting-profiles.md}
GET_URI=${GET_URI:-skill://csv-insights/SKILL.md}
TARGET=${CARGO_TARGET_DIR:-target}

command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 1; }
cargo build --quiet --release -p skills-mcp --example bench_server
BIN=$TARGET/release/examples/bench_server

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# Starts server $1 with its standard input on a FIFO (closing it stops the
# server); sets URL and adds the pid to PIDS and to PID_<server>.
start() {
  local which=$1
  mkfifo "$WORK/$which.in"
  "$BIN" "$which" "$DIR" < "$WORK/$which.in" > "$WORK/$which.url" &
  PIDS+=($!)
  eval "PID_$which=$!"
  exec {fd}>"$WORK/$which.in"
  eval "FD_$which=$fd"
  for _ in $(seq 100); do
    [ -s "$WORK/$which.url" ] && break
    sleep 0.05
  done
  URL=$(head -n1 "$WORK/$which.url")
}

# A session on $1 (initialize + initialized); prints its id.
session() {
  local url=$1 id
  id=$(curl -sS -D - -o /dev/null -X POST "$url" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
    | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}')
  curl -sS -o /dev/null -X POST "$url" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $id" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo "$id"
}

# Checks that $1 answers method $2 with params $3 with a result.
check() {
  local url=$1 sid
  sid=$(session "$url")
  if ! curl -sS -X POST "$url" -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $sid" \
      -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$2\",\"params\":$3}" | grep -q '"result"'; then
    echo "$url does not answer $2 $3 with a result" >&2
    exit 1
  fi
}

# CPU time (user + system) of process $1 so far, in clock ticks.
cpu_ticks() {
  awk '{print $14 + $15}' "/proc/$1/stat"
}

# One wrk run: server pid, URL, threads, connections, method, params;
# prints "req/s p50 p99 cpu-us-per-request errors".
run() {
  local pid=$1 url=$2 threads=$3 conns=$4 method=$5 params=$6 sessions="" out before after
  for _ in $(seq "$threads"); do sessions+="$(session "$url"),"; done
  before=$(cpu_ticks "$pid")
  out=$(MCP_SESSIONS=$sessions MCP_METHOD=$method MCP_PARAMS=$params \
    wrk -t"$threads" -c"$conns" -d"${SECONDS_PER_RUN}s" --latency -s scripts/mcp-wrk.lua "$url")
  after=$(cpu_ticks "$pid")
  local rps p50 p99 errors requests cpu
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  cpu=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$requests" \
    'BEGIN { printf "%.1fus", t / hz * 1e6 / n }')
  errors=$(awk '/Non-2xx/ {print $NF} /Socket errors/ {print "socket:" $0}' <<<"$out" | tr '\n' ' ')
  echo "$rps $p50 $p99 $cpu ${errors:-0}"
}

# Resident memory of process $1, in MiB.
rss() {
  awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"
}

start ours; OURS=$URL
start rmcp; RMCP=$URL
READ_PARAMS="{\"uri\":\"$READ_URI\"}"
GET_PARAMS="{\"uri\":\"$GET_URI\"}"
for url in "$OURS" "$RMCP"; do
  check "$url" resources/read "$READ_PARAMS"
  check "$url" skills/get "$GET_PARAMS"
done

echo "# $(date -u +%FT%TZ) $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $DIR, ${SECONDS_PER_RUN}s per run, $ROUNDS rounds; read $READ_URI, get $GET_URI"
printf '%-7s %-5s %-28s %12s %10s %10s %10s  %s\n' round server load "req/s" p50 p99 cpu/req errors
for round in $(seq "$ROUNDS"); do
  for load in "read-1x1:1:1:resources/read:$READ_PARAMS" \
              "read-2x16:2:16:resources/read:$READ_PARAMS" \
              "get-2x16:2:16:skills/get:$GET_PARAMS"; do
    IFS=: read -r name threads conns method params <<<"$load"
    for server in ours rmcp; do
      url=$OURS pid=$PID_ours
      [ "$server" = rmcp ] && url=$RMCP pid=$PID_rmcp
      read -r rps p50 p99 cpu errors <<<"$(run "$pid" "$url" "$threads" "$conns" "$method" "$params")"
      printf '%-7s %-5s %-28s %12s %10s %10s %10s  %s\n' "$round" "$server" "$name ($method)" \
        "$rps" "$p50" "$p99" "$cpu" "$errors"
    done
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$FLOOD_SECONDS" -gt 0 ]; then
  echo "# flood: ${FLOOD_SECONDS}s of initialize requests, 16 connections, no session"
  INIT_PARAMS='{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}'
  for server in ours rmcp; do
    url=$OURS pid=$PID_ours
    [ "$server" = rmcp ] && url=$RMCP pid=$PID_rmcp
    before=$(rss "$pid")
    out=$(MCP_SESSIONS="" MCP_METHOD=initialize MCP_PARAMS=$INIT_PARAMS \
      wrk -t2 -c16 -d"${FLOOD_SECONDS}s" -s scripts/mcp-wrk.lua "$url")
    requests=$(awk '/requests in/ {print $1}' <<<"$out")
    echo "$server: $requests initialize requests, RSS ${before} MiB -> $(rss "$pid") MiB"
  done
fi
