#!/usr/bin/env bash
# What the always-on hot-key sampling costs the data path, alone: one server process, each round
# running the same load with hotkey-sample-period as shipped (64) and with it 0 (CONFIG SET just
# before the run), the order alternating from round to round so drift on a shared machine lands
# on both. The load is redis-benchmark's SET, GET and INCR at pipeline 30 over 100,000 keys
# (where the data path's own cost is smallest, so a per-command cost shows most). Reported: the
# medians of requests per second and of the server's CPU time per request (the steadier of the two
# on a shared 2-core machine), and their ratios sampled/off.
#
#   tests/Diagnostics.Benchmarks/hotkey-sampling-cost.sh [REQUESTS] [ROUNDS]
set -euo pipefail
requests=${1:-1000000} rounds=${2:-7}
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
dotnet build -c Release "$repo/server" >/dev/null

port=$(free_port) http=$(free_port)
dotnet "$repo/server/bin/Release/net10.0/Diagnostics.Server.dll" --port $port --http-port $http --dir "$scratch" >"$scratch/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
redis-cli -p $port info server | grep -q "process_id:$pid" || { echo "port $port is not the server started here" >&2; exit 1; }
shipped=$(redis-cli -p $port config get hotkey-sample-period | tail -1)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
ticks=$(getconf CLK_TCK)

run() { # period -> "rps cpu_us_per_request"
  redis-cli -p $port config set hotkey-sample-period "$1" >/dev/null
  local before=$(cpu) total=0 out
  out=$(redis-benchmark -p $port -c 50 -n "$requests" -P 30 -r 100000 -t set,get,incr --csv | grep -v '"test"' | tr -d '"')
  local after=$(cpu)
  # The three tests' requests per second, as the harmonic mean (the rate of the whole run).
  echo "$out" | awk -F, -v cpu=$((after - before)) -v ticks=$ticks -v n=$((requests * 3)) \
    '{ t += 1 / $2 } END { printf "%.0f %.3f\n", NR / t, cpu * 1e6 / ticks / n }'
}
run "$shipped" >/dev/null; run 0 >/dev/null   # warm-up, unmeasured
: >"$scratch/sampled" ; : >"$scratch/off"
for round in $(seq "$rounds"); do
  if (( round % 2 )); then order="$shipped 0"; else order="0 $shipped"; fi
  for period in $order; do
    result=$(run "$period")
    name=$([[ $period == 0 ]] && echo off || echo sampled)
    echo "$result" >>"$scratch/$name"
    echo "round $round $name (hotkey-sample-period $period): $result" >&2
  done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rps_on=$(cut -d' ' -f1 "$scratch/sampled" | median) rps_off=$(cut -d' ' -f1 "$scratch/off" | median)
cpu_on=$(cut -d' ' -f2 "$scratch/sampled" | median) cpu_off=$(cut -d' ' -f2 "$scratch/off" | median)
echo "| hotkey-sample-period | requests/s (median) | CPU us/request (median) |"
echo "| --- | ---: | ---: |"
echo "| $shipped (shipped) | $rps_on | $cpu_on |"
echo "| 0 (off) | $rps_off | $cpu_off |"
awk -v a=$rps_on -v b=$rps_off -v c=$cpu_on -v d=$cpu_off 'BEGIN { printf "sampled/off: requests/s %.3f, CPU per request %.3f\n", a / b, c / d }'
