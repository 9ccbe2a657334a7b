#!/usr/bin/env python3
"""Memory of idle client connections, sluice and HAProxy side by side (the
HTTP/2 issue's memory target): N clients connect, make one request, then
stay idle; the proxy's RSS is read before and with them, and the
difference divided by N.

    python3 bench/idle_rss.py [--mode h1|h2c|tls] [--conns N]

h1:  HTTP/1.1 keep-alive clients (scenario http-ka-100's configuration).
h2c: HTTP/2 by prior knowledge (scenario h2c-100x10's configuration): the
     preface, SETTINGS, one GET on stream 1, its response read whole.
tls: HTTP/1.1 keep-alive over TLS (scenario https-ka-100's configuration,
     bench/https.cfg): handshake, one request.
"""
import argparse
import os
import socket
import ssl
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", sid) + payload


# HPACK, static table only: :method GET (2), :scheme http (6), :path / (4),
# :authority (1) as a literal without indexing
GET_HEADERS = bytes([0x82, 0x86, 0x84, 0x01, 0x01]) + b"x"


def h2_request(s):
    s.sendall(PREFACE + frame(4, 0, 0) + frame(1, 0x05, 1, GET_HEADERS))
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            raise RuntimeError("closed before the response ended")
        buf += d
        while len(buf) >= 9:
            length = int.from_bytes(buf[0:3], "big")
            if len(buf) < 9 + length:
                break
            ftype, flags = buf[3], buf[4]
            sid = int.from_bytes(buf[5:9], "big") & 0x7fffffff
            buf = buf[9 + length:]
            if ftype == 4 and not flags & 1:
                s.sendall(frame(4, 1, 0))   # SETTINGS ack
            if sid == 1 and ftype in (0, 1) and flags & 1:
                return


def h1_request(s):
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    d = b""
    while b"origin" not in d:
        r = s.recv(4096)
        if not r:
            raise RuntimeError("closed before the response")
        d += r


def hold(port, n, mode):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        if mode == "tls":
            s = ctx.wrap_socket(s, server_hostname="www.test.local")
        (h2_request if mode == "h2c" else h1_request)(s)
        conns.append(s)
    return conns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("h1", "h2c", "tls"), default="h2c")
    ap.add_argument("--conns", type=int, default=5000)
    ap.add_argument("--sluice", default=os.path.join(bench.TOP, "sluice"))
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy")
    ap.add_argument("--duration", type=int, default=5)
    a = ap.parse_args()
    bench.raise_fd_limit()
    work = tempfile.mkdtemp(prefix="idle-rss-")
    nginx, origin_port = bench.start_origin(work)
    scen = bench.SCENARIOS[{"h1": "http-ka-100", "h2c": "h2c-100x10",
                            "tls": "https-ka-100"}[a.mode]]
    try:
        for side in bench.PROXIES:
            p, port = bench.start_side(a, side, scen, work, origin_port)
            time.sleep(0.5)
            before = bench.rss_kb(p.pid)
            conns = hold(port, a.conns, a.mode)
            time.sleep(1)
            during = bench.rss_kb(p.pid)
            for s in conns:
                s.close()
            bench.stop(p)
            print("%-8s RSS %d KB before, %d KB with %d idle %s connections: %.2f KB each" %
                  (side[0], before, during, a.conns, a.mode, (during - before) / a.conns))
    finally:
        bench.stop(nginx)


if __name__ == "__main__":
    main()
