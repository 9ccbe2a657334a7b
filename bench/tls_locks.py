#!/usr/bin/env python3
"""OpenSSL 3 lock acquisitions per TLS handshake, sluice and HAProxy side by
side (the TLS issue's measure of what a handshake costs besides crypto).

Each proxy runs bench/https.cfg (a full handshake per request: wrk with
Connection: close) with bench/tools/lockcount.c preloaded, which counts
pthread_rwlock read and write acquisitions and how many had to wait. The
count of a run without traffic is subtracted, and the rest divided by the
requests wrk completed. Also reports the same for the backend side
(bench/https-backend.cfg: a TLS connection to the origin per request).

    python3 bench/tls_locks.py [--duration S] [--conns N]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def build_shim(work):
    so = os.path.join(work, "lockcount.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so,
                    os.path.join(bench.HERE, "tools", "lockcount.c"), "-ldl"], check=True)
    return so


def count(a, side, scen, work, origin_port, so, traffic):
    out = os.path.join(work, "locks-%s.txt" % side[0])
    env = {"LD_PRELOAD": so, "LOCKCOUNT_OUT": out}
    p, port = bench.start_side(a, side, scen, work, origin_port, env)
    reqs = 0
    if traffic:
        res = bench.parse_wrk(bench.run_wrk(bench.wrk_cmd(a, scen, port, a.conns, a.duration),
                                            a.duration))
        reqs = res["requests"]
    time.sleep(0.3)   # the shim writes its totals every 50 ms
    bench.stop(p)
    with open(out) as f:
        v = f.read().split()
    return reqs, {v[i]: int(v[i + 1]) for i in range(0, len(v), 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--conns", type=int, default=50)
    ap.add_argument("--sluice", default=os.path.join(bench.TOP, "sluice"))
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy")
    a = ap.parse_args()
    bench.raise_fd_limit()
    work = tempfile.mkdtemp(prefix="tls-locks-")
    so = build_shim(work)
    nginx, origin_port = bench.start_origin(work)
    try:
        for name in ("https-conn-ecdsa", "https-conn-rsa", "https-backend"):
            scen = bench.SCENARIOS[name]
            print(name, "-", scen["desc"])
            for side in bench.PROXIES:
                _, base = count(a, side, scen, work, origin_port, so, False)
                reqs, tot = count(a, side, scen, work, origin_port, so, True)
                if not reqs:
                    print("  %-8s no requests" % side[0])
                    continue
                per = {k: (tot[k] - base.get(k, 0)) / reqs for k in tot}
                print("  %-8s %d handshakes: per handshake %.1f read locks, %.1f write locks, "
                      "%.2f waited (read), %.2f waited (write)" %
                      (side[0], reqs, per["rdlock"], per["wrlock"], per["rdlock_waited"],
                       per["wrlock_waited"]))
    finally:
        bench.stop(nginx)


if __name__ == "__main__":
    main()
