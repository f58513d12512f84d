#!/usr/bin/env bash
# What client-side caching costs the data path: SET and GET throughput (redis-benchmark, pipeline
# 16) on this server with no tracking client, and with one RESP3 client in CLIENT TRACKING ON
# (default mode) that read 1000 of the benchmark's keys (so writes look the keys up and send
# invalidations), rounds alternating, medians. With a second argument, the same load on a build
# from before tracking existed (its Diagnostics.Server.dll), to show what the one field check
# costs when nobody tracks.
#
#   tests/Diagnostics.Benchmarks/client-tracking-cost.sh [REQUESTS] [BASE_DLL] [ROUNDS]
set -euo pipefail
requests=${1:-300000} base=${2:-} rounds=${3:-3}
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
dotnet build -c Release "$repo/server" >/dev/null
mkdir -p "$scratch/ours" "$scratch/base"
dotnet "$repo/server/bin/Release/net10.0/Diagnostics.Server.dll" --port 7390 --http-port 7391 --dir "$scratch/ours" >"$scratch/ours.log" 2>&1 &
ports=(7390)
if [[ -n $base ]]; then
  dotnet "$base" --port 7392 --http-port 7393 --dir "$scratch/base" >"$scratch/base.log" 2>&1 &
  ports+=(7392)
fi
for port in "${ports[@]}"; do
  for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
done

# A RESP3 tracking client: reads 1000 keys, then drains its invalidation pushes until killed.
cat >"$scratch/tracker.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def send(*args):
    s.sendall(b"".join([b"*%d\r\n" % len(args)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in args]))
send(b"HELLO", b"3"); send(b"CLIENT", b"TRACKING", b"ON")
for i in range(1000):
    send(b"GET", b"key:%012d" % i)
while s.recv(65536):
    pass
PY

load() { redis-benchmark -p "$1" -c 50 -n "$2" -P 16 -d 256 -r 100000 -t set,get --csv | grep -v '"test"' | tr -d '"'; }
for port in "${ports[@]}"; do load $port 200000 >/dev/null; done   # warm-up, unmeasured
for _ in $(seq "$rounds"); do
  for port in "${ports[@]}"; do
    for mode in untracked tracked; do
      [[ $port == 7392 && $mode == tracked ]] && continue
      tracker=""
      if [[ $mode == tracked ]]; then
        python3 "$scratch/tracker.py" $port &
        tracker=$!
        sleep 0.5
      fi
      load $port "$requests" | awk -F, -v p=$port -v m=$mode '{print p "\t" m "\t" $1 "\t" $2}' >>"$scratch/results"
      [[ -n $tracker ]] && kill $tracker
      sleep 0.2
    done
  done
done
redis-cli -p 7390 info stats | grep tracking_ || true

python3 - "$scratch/results" <<'PY'
import collections, statistics, sys
rps = collections.defaultdict(list)
for line in open(sys.argv[1]):
    port, mode, test, value = line.rstrip("\n").split("\t")
    rps[(port, mode, test)].append(float(value))
name = {"7390": "this build", "7392": "before tracking"}
print(f"{'server':16} {'mode':10} {'test':5} {'median rps':>11}  runs")
for (port, mode, test), values in sorted(rps.items()):
    print(f"{name[port]:16} {mode:10} {test:5} {statistics.median(values):11.0f}  {' '.join(f'{v:.0f}' for v in values)}")
PY
