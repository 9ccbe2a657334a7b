#!/usr/bin/env python3
"""Scripted HTTP/1 peer for regression tests, for what varnishtest's own
client and server cannot do: read messages with trailers and check the raw
bytes of a whole message (head, framing, body, trailers) by regex.

  h1raw.py server LISTEN [actions]   LISTEN is /unix/path or host:port;
                                     accepts one connection, then acts
  h1raw.py client HOST:PORT [actions]

Actions run in order:
  --send TEXT        send bytes (\\n, \\r, \\xHH escapes allowed)
  --read-msg         read one message: the head, then its body framed by
                     Content-Length, chunked encoding (trailers included) or,
                     for a response without either, the close; a response to
                     HEAD (see --head) or with status 1xx/204/304 has no body
  --head             the next response read answers a HEAD request
  --expect-re RE     the last message read, as latin-1 text, must contain a
                     match of the Python regex RE (case-insensitive, DOTALL)
  --expect-not-re RE ... must not contain one
  --expect-close     read until EOF; fail if any byte arrives
  --print            write the last message read to stdout
Every read is bounded by --timeout seconds (default 5); so is the wait for
the connection. Exit status 0 on success, 1 with a message otherwise.
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


class Reader:
    """Buffered reads on a socket; bytes read past a message are kept for
    the next one (pipelining)."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def line(self):
        while b"\n" not in self.buf:
            if not self.fill():
                sys.exit("EOF in the middle of a line: %r" % self.buf)
        i = self.buf.index(b"\n") + 1
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def exact(self, n):
        while len(self.buf) < n:
            if not self.fill():
                sys.exit("EOF after %d of %d body bytes" % (len(self.buf), n))
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def until_close(self):
        while self.fill():
            pass
        out, self.buf = self.buf, b""
        return out


def read_head(r):
    head = b""
    while True:
        ln = r.line()
        head += ln
        if ln in (b"\r\n", b"\n"):
            return head


def header_values(head, name):
    out = []
    for ln in head.split(b"\n")[1:]:
        k, sep, v = ln.partition(b":")
        if sep and k.strip().lower() == name:
            out.append(v.strip().lower())
    return out


def read_chunked(r):
    raw = b""
    while True:
        ln = r.line()
        raw += ln
        size = int(ln.split(b";")[0].strip(), 16)
        if size == 0:
            break
        raw += r.exact(size + 2)
    while True:  # trailers, up to the empty line
        ln = r.line()
        raw += ln
        if ln in (b"\r\n", b"\n"):
            return raw


def read_msg(r, is_response, head_req):
    """Reads one message; interim (1xx) responses are returned alone."""
    head = read_head(r)
    first = head.split(b"\r\n")[0].split(b" ")
    if is_response:
        status = int(first[1])
        if head_req or status < 200 or status in (204, 304):
            return head
    if b"chunked" in b",".join(header_values(head, b"transfer-encoding")):
        return head + read_chunked(r)
    cl = header_values(head, b"content-length")
    if cl:
        return head + r.exact(int(cl[0]))
    if is_response:
        return head + r.until_close()
    return head


def connect(a):
    if a.mode == "client":
        host, port = a.addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=a.timeout)
        s.settimeout(a.timeout)
        return s, None
    if a.addr.startswith("/"):
        if os.path.exists(a.addr):
            os.unlink(a.addr)
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(a.addr)
    else:
        host, port = a.addr.rsplit(":", 1)
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((host, int(port)))
    ls.listen(8)
    ls.settimeout(a.timeout)
    c, _ = ls.accept()
    c.settimeout(a.timeout)
    return c, ls


def run(a, sock):
    r = Reader(sock)
    last = b""
    head_req = False
    for kind, val in a.steps:
        if kind == "send":
            sock.sendall(unescape(val))
        elif kind == "head":
            head_req = True
        elif kind == "read_msg":
            last = read_msg(r, a.mode == "client", head_req)
            head_req = False
        elif kind == "expect_re":
            if not re.search(val, last.decode("latin-1"), re.I | re.S):
                sys.exit("no match for %r in %r" % (val, last))
        elif kind == "expect_not_re":
            if re.search(val, last.decode("latin-1"), re.I | re.S):
                sys.exit("unexpected match for %r in %r" % (val, last))
        elif kind == "expect_close":
            extra = r.buf or sock.recv(4096)
            if extra:
                sys.exit("expected EOF, received %r" % extra)
        elif kind == "print":
            sys.stdout.write(last.decode("latin-1"))
            sys.stdout.flush()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("server", "client"))
    p.add_argument("addr")
    p.add_argument("--timeout", type=float, default=5.0)
    p.set_defaults(steps=[])
    for name in ("send", "expect_re", "expect_not_re"):
        p.add_argument("--" + name.replace("_", "-"), dest=name, action=Step)
    for name in ("read_msg", "head", "expect_close", "print"):
        p.add_argument("--" + name.replace("_", "-"), dest=name, action=Step,
                       nargs=0)
    a = p.parse_args()
    sock, ls = connect(a)
    try:
        run(a, sock)
        sock.close()
    finally:
        if ls:
            ls.close()
            if a.addr.startswith("/") and os.path.exists(a.addr):
                os.unlink(a.addr)


if __name__ == "__main__":
    try:
        main()
    except (OSError, socket.timeout, ValueError) as e:
        sys.exit("error: %s" % e)
