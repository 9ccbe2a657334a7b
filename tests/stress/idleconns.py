#!/usr/bin/env python3
"""idleconns: many idle HTTP keep-alive connections, for the idle-memory
stress test (test_idle_memory.sh).

    idleconns.py HOST PORT CONNS MAX_SECONDS

Opens CONNS connections, sends one request on each and reads its whole
answer (Content-Length), then leaves them idle and prints "idle N". On each
line read from stdin afterwards: "again" sends one more request on every
connection and checks its answer (a connection that was idle must still
work), printing "again N"; "close" closes them all and exits 0. Any failure
(connect, short or wrong answer, a connection closed by the proxy, time
over MAX_SECONDS) prints "FAIL ..." and exits 1. Loopback only.
"""
import selectors
import socket
import sys
import time

REQ = b"GET /idle HTTP/1.1\r\nHost: idle\r\nX-Req-Id: %d\r\n\r\n"


def fail(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def answer_done(buf):
    """Length of one complete answer at the start of buf, or 0."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return 0
    head = buf[:end].decode("latin-1").split("\r\n")
    if not head[0].startswith("HTTP/1.1 200"):
        fail("status line %r" % head[0])
    length = 0
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
        if name.strip().lower() == "connection" and "close" in value.lower():
            fail("the proxy announced a close")
    total = end + 4 + length
    return total if len(buf) >= total else 0


def round_trip(socks, deadline, what):
    """One request on every connection, all in flight at once."""
    sel = selectors.DefaultSelector()
    bufs = {}
    for i, s in enumerate(socks):
        s.sendall(REQ % i)
        bufs[s] = b""
        sel.register(s, selectors.EVENT_READ)
    left = len(socks)
    while left:
        if time.time() > deadline:
            fail("%s: %d answers missing at the deadline" % (what, left))
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            data = s.recv(65536)
            if not data:
                fail("%s: connection closed by the proxy" % what)
            bufs[s] += data
            if answer_done(bufs[s]):
                if answer_done(bufs[s]) != len(bufs[s]):
                    fail("%s: bytes after the answer" % what)
                sel.unregister(s)
                left -= 1
    sel.close()


def main():
    host, port, conns, max_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    deadline = time.time() + max_s
    socks = []
    for i in range(conns):
        try:
            socks.append(socket.create_connection((host, port), timeout=10))
        except OSError as e:
            fail("connect %d: %s" % (i, e))
    round_trip(socks, deadline, "first")
    print("idle %d" % len(socks), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "again":
            round_trip(socks, deadline, "again")
            print("again %d" % len(socks), flush=True)
        elif cmd == "close":
            for s in socks:
                s.close()
            print("closed", flush=True)
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
