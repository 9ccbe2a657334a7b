#!/usr/bin/env python3
"""Plain HTTP/1.1 origin for the TLS tests: it lets a client check bodies
byte for byte on both directions of a proxy.

  origin.py PATH [--conns N] [--lifetime S]

Listens on the UNIX socket PATH (created at start, removed at exit) and
serves every connection in a thread of its own, with keep-alive:
  GET /bytes/N[?chunked]  N bytes of body(N) (see below), framed by
                          Content-Length, or chunked in uneven pieces
  POST /echo[?chunked]    the request body sent back (Content-Length or
                          chunked framing on either side), with
                          X-Req-Len: its length
Every response carries X-Conn: the number of the connection (1, 2, ...) and
X-Req: the number of the request on that connection.
body(N) is random.Random(N).randbytes(N): tlsclient.py computes the same.
Exits 0 after N connections were served (--conns), or after S seconds
(--lifetime, default 20), 1 if a request could not be parsed.
"""
import argparse
import os
import random
import socket
import sys
import threading

failed = []


def body_of(n):
    return random.Random(n).randbytes(n)


class Reader:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self):
        chunk = self.sock.recv(262144)
        if not chunk:
            raise EOFError
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            if len(self.buf) > 65536:
                raise ValueError("line too long")
            self.fill()
        i = self.buf.index(b"\r\n")
        out, self.buf = self.buf[:i], self.buf[i + 2:]
        return out

    def exact(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


def read_body(r, headers):
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(r.line().split(b";")[0], 16)
            if size == 0:
                while r.line():
                    pass
                return b"".join(parts)
            parts.append(r.exact(size))
            if r.exact(2) != b"\r\n":
                raise ValueError("bad chunk end")
    return r.exact(int(headers.get("content-length", "0")))


def chunked(data):
    out, i, step = [], 0, 1
    while i < len(data):
        piece = data[i:i + step]
        out.append(b"%x\r\n%s\r\n" % (len(piece), piece))
        i += len(piece)
        step = step * 3 + 7 if step < 40000 else 1000
    out.append(b"0\r\n\r\n")
    return b"".join(out)


def serve(c, conn_no):
    r = Reader(c)
    req_no = 0
    try:
        while True:
            try:
                start = r.line()
            except EOFError:
                return
            method, target, _ = start.decode("latin-1").split(" ", 2)
            headers = {}
            while True:
                h = r.line()
                if not h:
                    break
                k, v = h.decode("latin-1").split(":", 1)
                headers[k.strip().lower()] = v.strip()
            req_no += 1
            path, _, query = target.partition("?")
            body = read_body(r, headers)
            extra = ""
            if method == "GET" and path.startswith("/bytes/"):
                out = body_of(int(path[7:]))
            elif method == "POST" and path == "/echo":
                out = body
                extra = "X-Req-Len: %d\r\n" % len(body)
            else:
                out = b"not found\n"
            if query == "chunked":
                framing, payload = "Transfer-Encoding: chunked\r\n", chunked(out)
            else:
                framing, payload = "Content-Length: %d\r\n" % len(out), out
            head = ("HTTP/1.1 200 OK\r\n%s%sX-Conn: %d\r\nX-Req: %d\r\n\r\n"
                    % (framing, extra, conn_no, req_no))
            c.sendall(head.encode() + payload)
    except (OSError, EOFError):
        return
    except ValueError as e:
        failed.append("connection %d: %s" % (conn_no, e))
    finally:
        c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("path")
    p.add_argument("--conns", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=20.0)
    a = p.parse_args()

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(a.path):
        os.unlink(a.path)
    s.bind(a.path)
    s.listen(64)
    threading.Timer(a.lifetime, lambda: os._exit(2)).start()
    threads, n = [], 0
    try:
        while not a.conns or n < a.conns:
            c, _ = s.accept()
            n += 1
            t = threading.Thread(target=serve, args=(c, n), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()
    finally:
        os.unlink(a.path)
    if failed:
        print("\n".join(failed), file=sys.stderr)
        os._exit(1)
    os._exit(0)


if __name__ == "__main__":
    main()
