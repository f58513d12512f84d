#!/usr/bin/env bash
# Compares two builds of our server under the same redis-benchmark load, alternating between them
# round by round, and prints median requests per second and the ratio. The harness compares us
# with redis-server; this compares a change with what came before it, without redis-server's
# run-to-run noise in the ratio.
#
#   tests/Diagnostics.Benchmarks/compare-builds.sh BASE_REV TESTS PIPELINE REQUESTS [ROUNDS]
#   e.g. tests/Diagnostics.Benchmarks/compare-builds.sh HEAD~1 lpush,zadd 30 200000 5
#
# BASE_REV is built from a git worktree in a scratch directory; the working tree's Release build
# is the other side. Needs redis-benchmark (apt-get install -y redis-tools).
set -euo pipefail
base_rev=$1 tests=$2 pipeline=$3 requests=$4 rounds=${5:-5}
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'pkill -f "port 737[02] " || true; git -C "$repo" worktree remove --force "$scratch/src" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
command -v redis-benchmark >/dev/null || { echo "redis-benchmark is missing: apt-get install -y redis-tools" >&2; exit 2; }

git -C "$repo" worktree add --detach "$scratch/src" "$base_rev" >/dev/null
dotnet build -c Release "$scratch/src/server" -o "$scratch/base" >/dev/null
dotnet build -c Release "$repo/server" >/dev/null
mkdir -p "$scratch/new-dir" "$scratch/base-dir"
dotnet "$repo/server/bin/Release/net10.0/Diagnostics.Server.dll" --port 7370 --http-port 7371 --dir "$scratch/new-dir" >"$scratch/new.log" 2>&1 &
dotnet "$scratch/base/Diagnostics.Server.dll" --port 7372 --http-port 7373 --dir "$scratch/base-dir" >"$scratch/base.log" 2>&1 &
for port in 7370 7372; do
  for _ in $(seq 50); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
done

load() { redis-benchmark -p "$1" -c 50 -n "$2" -P "$pipeline" -d 256 -r 1000000 -t "$tests" --csv; }
for port in 7370 7372; do load $port 200000 >/dev/null; done   # warm-up, unmeasured
for _ in $(seq "$rounds"); do
  for port in 7370 7372; do
    load $port "$requests" | grep -v '"test"' | tr -d '"' | awk -F, -v p=$port '{print p "\t" $1 "\t" $2}' >>"$scratch/results"
  done
done

python3 - "$scratch/results" <<'PY'
import collections, statistics, sys
rps = collections.defaultdict(list)
for line in open(sys.argv[1]):
    port, test, value = line.rstrip("\n").split("\t")
    rps[(test, port)].append(float(value))
print(f"{'test':32} {'new rps':>10} {'base rps':>10} {'new/base':>8}")
for test in sorted({t for t, _ in rps}):
    new, base = statistics.median(rps[(test, "7370")]), statistics.median(rps[(test, "7372")])
    print(f"{test:32} {new:10.0f} {base:10.0f} {new / base:8.2f}")
PY
