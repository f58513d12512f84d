#!/usr/bin/env bash
# Compares two builds of our server under the same redis-benchmark load, alternating between them
# round by round (and which goes first), and prints the medians and ratios of requests per second
# and of the server's CPU time per request. The harness compares us with redis-server; this
# compares a change with what came before it, without redis-server's run-to-run noise in the ratio.
# On a 2-core machine redis-benchmark and the server share the cores, so throughput moves by 10%
# from round to round; CPU per request (user + system time of the server process, from
# /proc/PID/stat) is the steadier measure of what a change costs.
#
#   tests/Diagnostics.Benchmarks/compare-builds.sh BASE_REV TESTS PIPELINE REQUESTS [ROUNDS]
#   e.g. tests/Diagnostics.Benchmarks/compare-builds.sh HEAD~1 lpush,zadd 30 200000 5
#
# BASE_REV is built from a git worktree in a scratch directory; the working tree's Release build
# is the other side. Needs redis-benchmark (apt-get install -y redis-tools).
#
# KEYSPACE=N (default 1000000) is redis-benchmark's -r: a small one (1000) keeps the data in the
# CPU's caches, so what is compared is the command path rather than where each process's
# allocator happened to put a million keys. PIN=1 runs the servers on the last core and
# redis-benchmark on the others (taskset), so neither is moved between cores mid-round.
set -euo pipefail
base_rev=$1 tests=$2 pipeline=$3 requests=$4 rounds=${5:-5}
keyspace=${KEYSPACE:-1000000}
server_cpu=() client_cpu=()
if [[ ${PIN:-0} == 1 ]]; then
  last=$(( $(nproc) - 1 ))
  (( last > 0 )) || { echo "PIN=1 needs two cores or more" >&2; exit 2; }
  server_cpu=(taskset -c "$last") client_cpu=(taskset -c "0-$(( last - 1 ))")
fi
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'pkill -f "port 737[02] " || true; git -C "$repo" worktree remove --force "$scratch/src" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
command -v redis-benchmark >/dev/null || { echo "redis-benchmark is missing: apt-get install -y redis-tools" >&2; exit 2; }

git -C "$repo" worktree add --detach "$scratch/src" "$base_rev" >/dev/null
dotnet build -c Release "$scratch/src/server" -o "$scratch/base" >/dev/null
dotnet build -c Release "$repo/server" >/dev/null
mkdir -p "$scratch/new-dir" "$scratch/base-dir"
"${server_cpu[@]}" dotnet "$repo/server/bin/Release/net10.0/Diagnostics.Server.dll" --port 7370 --http-port 7371 --dir "$scratch/new-dir" >"$scratch/new.log" 2>&1 &
declare -A pid_of
pid_of[7370]=$!
"${server_cpu[@]}" dotnet "$scratch/base/Diagnostics.Server.dll" --port 7372 --http-port 7373 --dir "$scratch/base-dir" >"$scratch/base.log" 2>&1 &
pid_of[7372]=$!
for port in 7370 7372; do
  for _ in $(seq 50); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
done

load() { "${client_cpu[@]}" redis-benchmark -p "$1" -c 50 -n "$2" -P "$pipeline" -d 256 -r "$keyspace" -t "$3" --csv; }
# utime + stime of the server process, in clock ticks (fields 14 and 15 of /proc/PID/stat; the
# command name in field 2 has no spaces here).
cpu_ticks() { awk '{print $14 + $15}' "/proc/${pid_of[$1]}/stat"; }
for port in 7370 7372; do load $port 200000 "$tests" >/dev/null; done   # warm-up, unmeasured
for round in $(seq "$rounds"); do
  order="7370 7372"; (( round % 2 == 0 )) && order="7372 7370"
  for test in ${tests//,/ }; do
    for port in $order; do
      before=$(cpu_ticks $port)
      line=$(load $port "$requests" "$test" | grep -v '"test"' | tr -d '"')
      after=$(cpu_ticks $port)
      echo "$line" | awk -F, -v p=$port -v t=$((after - before)) '{print p "\t" $1 "\t" $2 "\t" t}' >>"$scratch/results"
    done
  done
done

python3 - "$scratch/results" "$requests" "$(getconf CLK_TCK)" <<'PY'
import collections, statistics, sys
requests, tick_us = int(sys.argv[2]), 1e6 / int(sys.argv[3])
rps, cpu = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    port, test, value, ticks = line.rstrip("\n").split("\t")
    rps[(test, port)].append(float(value))
    cpu[(test, port)].append(int(ticks) * tick_us / requests)
print(f"{'test':24} {'new rps':>10} {'base rps':>10} {'new/base':>8}   {'new CPU us/req':>14} {'base':>6} {'base/new':>8}   {'round by round base/new CPU: median (min-max)':>20}")
for test in sorted({t for t, _ in rps}):
    new, base = statistics.median(rps[(test, "7370")]), statistics.median(rps[(test, "7372")])
    new_cpu, base_cpu = statistics.median(cpu[(test, "7370")]), statistics.median(cpu[(test, "7372")])
    # The two builds run back to back in each round: the ratio within a round pairs them under
    # the same conditions, and its spread shows how far one round can be trusted.
    paired = [b / n for n, b in zip(cpu[(test, "7370")], cpu[(test, "7372")])]
    print(f"{test:24} {new:10.0f} {base:10.0f} {new / base:8.2f}   {new_cpu:14.2f} {base_cpu:6.2f} {base_cpu / new_cpu:8.2f}   "
          f"{statistics.median(paired):.2f} ({min(paired):.2f}-{max(paired):.2f})")
print("ratios above 1: the new build is faster (more requests per second, less CPU per request)")
PY
