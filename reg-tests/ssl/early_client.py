#!/usr/bin/env python3
"""Client for tls_early_response_sluice_todo.vtc.txt: on one connection,
GET /early with a body of SIZE bytes (the server answers before reading
it), then GET /next. The proxy may answer /next, or close the connection
(HAProxy does when the server closed after its early answer); it must not
read the rest of the /early body as a request (a 400, or any answer that
is not the one of /next). Repeated COUNT times.

  early_client.py HOST PORT SIZE COUNT
"""
import socket
import sys


def response(s, buf):
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None, None, buf
        buf += d
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    cl = 0
    for l in lines[1:]:
        k, _, v = l.partition(b":")
        if k.strip().lower() == b"content-length":
            cl = int(v)
    while len(buf) < cl:
        d = s.recv(65536)
        if not d:
            return None, None, buf
        buf += d
    return lines[0], buf[:cl], buf[cl:]


def main():
    host, port, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for i in range(count):
        s = socket.create_connection((host, port), timeout=5)
        buf = b""
        try:
            s.sendall(b"GET /early HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size
                      + b"x" * size)
            st, body, buf = response(s, buf)
            if st is None:
                continue   # closed without an answer: allowed here
            s.sendall(b"GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
            st, body, buf = response(s, buf)
        except ConnectionError:
            continue       # closed: allowed
        finally:
            s.close()
        if st is not None and (b" 200 " not in st + b" " or b"/next" not in body):
            sys.exit("connection %d: /next answered %r %r" % (i, st, body[:80]))
    print("ok")


if __name__ == "__main__":
    main()
