#!/usr/bin/env bash
# What max-waiting-commands does under the fault it is for (too-busy-fault.py): for each writer
# count and each limit (0 = none, 16 = shipped), a fresh Release server runs the fault for 20 s;
# reported: the bystander's PING latency, the refusals, and from the server's own history the
# longest run of seconds with work queued in the thread pool, its longest queue, and its threads.
#
#   tests/Diagnostics.Benchmarks/too-busy.sh [SECONDS] [WRITERS...]
set -euo pipefail
seconds=${1:-20}; shift || true
writer_counts=("${@:-32 200}")
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
dotnet build -c Release "$repo/server" >/dev/null

for writers in ${writer_counts[@]}; do
  for limit in 0 16; do
    port=$(free_port) http=$(free_port)
    dotnet "$repo/server/bin/Release/net10.0/Diagnostics.Server.dll" --port $port --http-port $http --dir "$scratch" --max-waiting-commands $limit >"$scratch/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
    fault=$(python3 "$repo/tests/Diagnostics.Benchmarks/too-busy-fault.py" $port "$seconds" "$writers")
    sleep 1
    pool=$(curl -s "http://127.0.0.1:$http/api/history?seconds=$((seconds + 5))" | python3 -c '
import json, sys
s = json.load(sys.stdin)["series"]
run = longest = 0
for v in s["threadpool_queue_length"]:
    run = run + 1 if v > 0 else 0
    longest = max(longest, run)
print("pool_queued_s=%d pool_queue_max=%d pool_threads_max=%d waiting_max=%d" % (longest, max(s["threadpool_queue_length"]), max(s["threadpool_threads"]), max(s["shard_waiters_peak"])))')
    echo "writers=$writers max-waiting-commands=$limit $fault $pool"
    kill $pid; wait $pid 2>/dev/null || true
  done
done
