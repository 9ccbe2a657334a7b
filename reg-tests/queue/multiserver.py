#!/usr/bin/env python3
"""Concurrent scripted server for the queue tests: varnishtest's servers
take one connection at a time, and a server with maxconn N must be able to
hold N of them at once.

  multiserver.py PATH COUNT
listens on the UNIX socket PATH and serves COUNT connections, each in its
own thread: read 1 byte, send "a", read 5 bytes, send "s1 ok", close. Exits
0 once all are done, 1 if one of them fails or 10 s pass.
"""
import os
import socket
import sys
import threading

path, count = sys.argv[1], int(sys.argv[2])
failed = []


def read_exact(c, n):
    got = b""
    while len(got) < n:
        chunk = c.recv(n - len(got))
        if not chunk:
            raise IOError("closed after %r" % got)
        got += chunk
    return got


def serve(c):
    try:
        c.settimeout(10)
        read_exact(c, 1)
        c.sendall(b"a")
        read_exact(c, 5)
        c.sendall(b"s1 ok")
    except Exception as e:  # reported at exit
        failed.append(str(e))
    finally:
        c.close()


if os.path.exists(path):
    os.unlink(path)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(64)
srv.settimeout(10)
threads = []
try:
    for _ in range(count):
        c, _ = srv.accept()
        t = threading.Thread(target=serve, args=(c,))
        t.start()
        threads.append(t)
except socket.timeout:
    failed.append("only %d connections came" % len(threads))
for t in threads:
    t.join()
os.unlink(path)
if failed:
    print("multiserver:", "; ".join(failed))
sys.exit(1 if failed else 0)
