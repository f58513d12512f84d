#!/usr/bin/env python3
"""The fault max-waiting-commands answers, as an operator meets it: one client runs DEBUG SLEEP 0.6
back to back (it holds every shard, as in Redis) while WRITERS clients send MSETs over several
shards, backing off 50 ms when refused with TOOBUSY, and a bystander sends PING every 10 ms.
Prints the bystander's latency and the refusals.

    too-busy-fault.py PORT SECONDS WRITERS
"""
import socket, sys, threading, time

port, seconds, writers = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
stop = time.time() + seconds


def call(sock, *args):
    sock.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
    return sock.recv(1000)


def sleeper():
    sock = socket.create_connection(("127.0.0.1", port))
    while time.time() < stop:
        call(sock, b"DEBUG", b"SLEEP", b"0.6")


refused = [0]


def writer(i):
    sock = socket.create_connection(("127.0.0.1", port))
    prefix = b"w%d:" % i
    while time.time() < stop:
        reply = call(sock, b"MSET", prefix + b"a", b"1", prefix + b"b", b"2", prefix + b"c", b"3", prefix + b"d", b"4")
        if reply.startswith(b"-TOOBUSY"):
            refused[0] += 1
            time.sleep(0.05)


latencies = []


def bystander():
    sock = socket.create_connection(("127.0.0.1", port))
    while time.time() < stop:
        started = time.time()
        call(sock, b"PING")
        latencies.append(time.time() - started)
        time.sleep(0.01)


threads = [threading.Thread(target=sleeper), threading.Thread(target=bystander)]
threads += [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
for t in threads:
    t.start()
for t in threads:
    t.join()
latencies.sort()
print("ping_p50_ms=%.1f ping_p99_ms=%.1f ping_max_ms=%.1f refused=%d"
      % (latencies[len(latencies) // 2] * 1000, latencies[int(len(latencies) * 0.99)] * 1000, latencies[-1] * 1000, refused[0]))
