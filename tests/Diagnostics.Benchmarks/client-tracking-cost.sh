#!/usr/bin/env bash
# What client-side caching costs the data path: SET and GET throughput (redis-benchmark, pipeline
# 16) on this server with no tracking client, and with one RESP3 client in CLIENT TRACKING ON
# (default mode) that read 1000 of the benchmark's keys (so writes look keys up and send
# invalidations), rounds alternating, medians of requests per second and of the server's CPU
# time per request (the steadier of the two on a shared machine). With a second argument, the
# same load on a build from before tracking existed (its Diagnostics.Server.dll), to show what
# the field checks cost when nobody tracks.
#
#   tests/Diagnostics.Benchmarks/client-tracking-cost.sh [REQUESTS] [BASE_DLL] [ROUNDS]
set -euo pipefail
requests=${1:-300000} base=${2:-} rounds=${3:-3}
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
dotnet build -c Release "$repo/server" >/dev/null

declare -A pid name
start() { # label dll
  local port=$(free_port) http=$(free_port)
  mkdir -p "$scratch/$port"
  dotnet "$2" --port $port --http-port $http --dir "$scratch/$port" >"$scratch/$port.log" 2>&1 &
  pid[$port]=$! name[$port]=$1
  for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
  # Another process on the port would be measured instead: make sure it is the one started here.
  redis-cli -p $port info server | grep -q "process_id:${pid[$port]}" || { echo "port $port is not the $1 server" >&2; exit 1; }
  ports+=($port)
}
ports=()
start "this build" "$repo/server/bin/Release/net10.0/Diagnostics.Server.dll"
[[ -n $base ]] && start "before tracking" "$base"
ours=${ports[0]}
# The server's CPU time (user + system, clock ticks): throughput moves 10-30% between rounds on a
# shared 2-core machine, CPU time per request much less.
cpu() { awk '{print $14 + $15}' "/proc/${pid[$1]}/stat"; }

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

load() { redis-benchmark -p "$1" -c 50 -n "$2" -P 16 -d 256 -r 100000 -t "$3" --csv | grep -v '"test"' | tr -d '"'; }
for port in "${ports[@]}"; do load $port 200000 set,get >/dev/null; done   # warm-up, unmeasured
for _ in $(seq "$rounds"); do
  for port in "${ports[@]}"; do
    for mode in untracked tracked; do
      [[ $port != "$ours" && $mode == tracked ]] && continue
      tracker=""
      if [[ $mode == tracked ]]; then
        python3 "$scratch/tracker.py" $port &
        tracker=$!
        sleep 0.5
      fi
      for test in set get; do
        before=$(cpu $port)
        rps=$(load $port "$requests" $test | awk -F, '{print $2}')
        ticks=$(( $(cpu $port) - before ))
        printf '%s\t%s\t%s\t%s\t%s\n' "${name[$port]}" $mode ${test^^} "$rps" "$ticks" >>"$scratch/results"
      done
      [[ -n $tracker ]] && kill $tracker
      sleep 0.2
    done
  done
done
redis-cli -p "$ours" info stats | grep tracking_ || true

python3 - "$scratch/results" "$requests" "$(getconf CLK_TCK)" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    server, mode, test, value, ticks = line.rstrip("\n").split("\t")
    runs[(server, mode, test)].append((float(value), int(ticks)))
requests = int(sys.argv[2]); tick_us = 1e6 / int(sys.argv[3])
print(f"{'server':16} {'mode':10} {'test':5} {'median rps':>11} {'cpu us/req':>10}  runs (rps)")
for (server, mode, test), values in sorted(runs.items()):
    print(f"{server:16} {mode:10} {test:5} {statistics.median(v for v, _ in values):11.0f} "
          f"{statistics.median(t for _, t in values) * tick_us / requests:10.2f}  {' '.join(f'{v:.0f}' for v, _ in values)}")
PY
