#!/usr/bin/env python3
"""Memory of idle TLS connections, sluice and HAProxy side by side (the TLS
issue's memory target): N clients connect to bench/https.cfg, complete
their handshake and one keep-alive request, then stay idle; the proxy's RSS
is read before and with them, and the difference divided by N.

    python3 bench/tls_idle_rss.py [--conns N]
"""
import argparse
import os
import socket
import ssl
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def hold(port, n):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    conns = []
    for _ in range(n):
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                            server_hostname="www.test.local")
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        d = b""
        while b"origin" not in d:
            d += s.recv(4096)
        conns.append(s)
    return conns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conns", type=int, default=5000)
    ap.add_argument("--sluice", default=os.path.join(bench.TOP, "sluice"))
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy")
    ap.add_argument("--duration", type=int, default=5)
    a = ap.parse_args()
    bench.raise_fd_limit()
    work = tempfile.mkdtemp(prefix="tls-rss-")
    nginx, origin_port = bench.start_origin(work)
    scen = bench.SCENARIOS["https-ka-100"]
    try:
        for side in bench.PROXIES:
            p, port = bench.start_side(a, side, scen, work, origin_port)
            time.sleep(0.5)
            before = bench.rss_kb(p.pid)
            conns = hold(port, a.conns)
            time.sleep(1)
            during = bench.rss_kb(p.pid)
            for s in conns:
                s.close()
            bench.stop(p)
            print("%-8s RSS %d KB before, %d KB with %d idle TLS connections: %.1f KB each" %
                  (side[0], before, during, a.conns, (during - before) / a.conns))
    finally:
        bench.stop(nginx)


if __name__ == "__main__":
    main()
