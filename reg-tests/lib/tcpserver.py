#!/usr/bin/env python3
"""Scripted one-connection server for regression tests, for what
varnishtest's own server cannot do: check the exact bytes received (PROXY
protocol headers, binary data).

It listens on a UNIX socket path (created at start, removed at exit) or on
TCP host:port, accepts one connection, runs the actions in order, closes and
exits 0; on the first mismatch it prints what came and exits 1.

  --expect TEXT      read len(TEXT) bytes; they must equal TEXT
                     (\\n, \\r, \\xHH escapes allowed)
  --expect-hex HEX   the same for bytes written in hex, blanks allowed
                     ("16 0301 0041...")
  --expect-line-re RE  read one line (up to LF, at most 300 bytes) and match
                     the Python regex RE against it, CRLF included
  --send TEXT        send bytes (same escapes)
  --shutw            half-close
  --expect-close     read until EOF; fail if any byte arrives
Every read is bounded by --timeout seconds (default 5); so is the wait for
the connection.
"""
import argparse
import os
import re
import socket
import sys


def unescape(s):
    return s.encode().decode("unicode_escape").encode("latin-1")


class Step(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        ns.steps.append((self.dest, values))


def read_exact(c, n):
    got = b""
    while len(got) < n:
        chunk = c.recv(n - len(got))
        if not chunk:
            sys.exit("EOF after %r (%d of %d bytes)" % (got, len(got), n))
        got += chunk
    return got


def read_line(c, limit=300):
    got = b""
    while not got.endswith(b"\n"):
        if len(got) >= limit:
            sys.exit("no LF in the first %d bytes: %r" % (limit, got))
        chunk = c.recv(1)
        if not chunk:
            sys.exit("EOF after %r, expected a line" % got)
        got += chunk
    return got


def main():
    p = argparse.ArgumentParser()
    p.add_argument("listen", help="/unix/path or host:port")
    p.add_argument("--timeout", type=float, default=5.0)
    p.set_defaults(steps=[])
    for name in ("expect", "expect_hex", "expect_line_re", "send"):
        p.add_argument("--" + name.replace("_", "-"), dest=name, action=Step)
    for name in ("shutw", "expect_close"):
        p.add_argument("--" + name.replace("_", "-"), dest=name, action=Step, nargs=0)
    a = p.parse_args()

    if a.listen.startswith("/"):
        if os.path.exists(a.listen):
            os.unlink(a.listen)
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(a.listen)
    else:
        host, port = a.listen.rsplit(":", 1)
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((host, int(port)))
    ls.listen(8)
    ls.settimeout(a.timeout)
    try:
        c, _ = ls.accept()
        c.settimeout(a.timeout)
        for kind, val in a.steps:
            if kind in ("expect", "expect_hex"):
                want = unescape(val) if kind == "expect" else bytes.fromhex(val)
                got = read_exact(c, len(want))
                if got != want:
                    sys.exit("received %r, expected %r" % (got, want))
            elif kind == "expect_line_re":
                got = read_line(c)
                if not re.fullmatch(val.encode("latin-1"), got):
                    sys.exit("line %r does not match %r" % (got, val))
            elif kind == "send":
                c.sendall(unescape(val))
            elif kind == "shutw":
                c.shutdown(socket.SHUT_WR)
            elif kind == "expect_close":
                chunk = c.recv(4096)
                if chunk:
                    sys.exit("expected EOF, received %r" % chunk)
        c.close()
    finally:
        ls.close()
        if a.listen.startswith("/") and os.path.exists(a.listen):
            os.unlink(a.listen)


if __name__ == "__main__":
    try:
        main()
    except (OSError, socket.timeout) as e:
        sys.exit("error: %s" % e)
