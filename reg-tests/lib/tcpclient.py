#!/usr/bin/env python3
"""Scripted TCP client for regression tests, for what varnishtest's own
client cannot do (half-close, PROXY headers, many connections).

Actions run in order:
  --send TEXT        send bytes (\\n, \\r, \\xHH escapes allowed)
  --shutw            half-close: shutdown(SHUT_WR)
  --expect TEXT      read until TEXT has been received in full (exact)
  --expect-close     read until EOF; fail if any byte arrives
  --read-all         read until EOF and print what came (stdout)
Every read is bounded by --timeout seconds (default 5).
Exit status 0 on success, 1 with a message on stderr otherwise.
"""
import argparse
import socket
import sys


def unescape(s):
    return s.encode().decode("unicode_escape").encode("latin-1")


class Step(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        ns.steps.append((self.dest, values))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--timeout", type=float, default=5.0)
    p.set_defaults(steps=[])
    p.add_argument("--send", dest="send", action=Step)
    p.add_argument("--expect", dest="expect", action=Step)
    p.add_argument("--shutw", dest="shutw", action=Step, nargs=0)
    p.add_argument("--expect-close", dest="expect_close", action=Step, nargs=0)
    p.add_argument("--read-all", dest="read_all", action=Step, nargs=0)
    a = p.parse_args()

    s = socket.create_connection((a.host, a.port), timeout=a.timeout)
    s.settimeout(a.timeout)
    for kind, val in a.steps:
        if kind == "send":
            s.sendall(unescape(val))
        elif kind == "shutw":
            s.shutdown(socket.SHUT_WR)
        elif kind == "expect":
            want = unescape(val)
            got = b""
            while len(got) < len(want):
                chunk = s.recv(len(want) - len(got))
                if not chunk:
                    sys.exit("EOF after %r, expected %r" % (got, want))
                got += chunk
            if got != want:
                sys.exit("received %r, expected %r" % (got, want))
        elif kind == "expect_close":
            chunk = s.recv(4096)
            if chunk:
                sys.exit("expected EOF, received %r" % chunk)
        elif kind == "read_all":
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
            sys.stdout.write(out.decode("latin-1"))
    s.close()


if __name__ == "__main__":
    try:
        main()
    except (OSError, socket.timeout) as e:
        sys.exit("error: %s" % e)
