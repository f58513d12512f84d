#!/usr/bin/env bash
# What one MONITOR client costs, here and on redis-server, in one run: SET and GET throughput
# with no monitor and with one `redis-cli monitor` attached (its output thrown away), rounds
# alternating between the servers, medians and the share of throughput each server keeps.
#
#   tests/Diagnostics.Benchmarks/monitor-command-cost.sh [REQUESTS] [ROUNDS] [PIPELINE]
#
# Needs redis-server and redis-tools (apt-get install -y redis-server redis-tools). The monitor
# reads every line: a monitor that fell behind would grow the server's output buffer, not drop lines.
set -euo pipefail
requests=${1:-500000} rounds=${2:-3} pipeline=${3:-16}
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
for tool in redis-server redis-benchmark redis-cli; do
  command -v $tool >/dev/null || { echo "$tool is missing: apt-get install -y redis-server redis-tools" >&2; exit 2; }
done

dotnet build -c Release "$repo/server" >/dev/null
mkdir -p "$scratch/ours" "$scratch/redis"
dotnet "$repo/server/bin/Release/net10.0/Diagnostics.Server.dll" --port 7380 --http-port 7381 --dir "$scratch/ours" >"$scratch/ours.log" 2>&1 &
redis-server --port 7382 --save "" --appendonly no --dir "$scratch/redis" >"$scratch/redis.log" 2>&1 &
for port in 7380 7382; do
  for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
done

load() { redis-benchmark -p "$1" -c 50 -n "$2" -P "$pipeline" -d 256 -r 100000 -t set,get --csv | grep -v '"test"' | tr -d '"'; }
for port in 7380 7382; do load $port 300000 >/dev/null; done   # warm-up, unmeasured
for _ in $(seq "$rounds"); do
  for port in 7380 7382; do
    for mode in alone monitored; do
      monitor=""
      if [[ $mode == monitored ]]; then
        redis-cli -p $port monitor >/dev/null &
        monitor=$!
        sleep 0.3
      fi
      load $port "$requests" | awk -F, -v p=$port -v m=$mode '{print p "\t" m "\t" $1 "\t" $2}' >>"$scratch/results"
      [[ -n $monitor ]] && kill $monitor
    done
  done
done

python3 - "$scratch/results" <<'PY'
import collections, statistics, sys
rps = collections.defaultdict(list)
for line in open(sys.argv[1]):
    port, mode, test, value = line.rstrip("\n").split("\t")
    rps[(port, test, mode)].append(float(value))
name = {"7380": "ours", "7382": "redis-server"}
print(f"{'server':14} {'test':5} {'alone rps':>10} {'monitored rps':>14} {'kept':>6}")
for port, test in sorted({(p, t) for p, t, _ in rps}):
    alone, monitored = statistics.median(rps[(port, test, "alone")]), statistics.median(rps[(port, test, "monitored")])
    print(f"{name[port]:14} {test:5} {alone:10.0f} {monitored:14.0f} {monitored / alone:6.2f}")
PY
