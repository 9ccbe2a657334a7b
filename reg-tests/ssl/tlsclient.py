#!/usr/bin/env python3
"""Scripted TLS client for the TLS tests (varnishtest has none). TLS runs
over memory BIOs on a plain socket, so that the test controls every byte:
what goes in clear before the handshake, a close_notify without closing,
a TCP half-close, a slow reader.

  tlsclient.py HOST PORT [options] [actions]

Options:
  --sni NAME        server name to send (none by default)
  --ca FILE         verify the server's certificate against FILE; no
                    verification otherwise
  --check-name      and its names against --sni
  --cert FILE       client certificate (key in the same file)
  --alpn LIST       protocols offered, comma-separated
  --min-ver V, --max-ver V   TLSv1.2 or TLSv1.3
  --ciphers LIST    TLS 1.2 cipher list (OpenSSL syntax)
  --host-header H   Host header of the HTTP requests (default test.local)
  --rcvbuf N        SO_RCVBUF of the socket, set before connecting
  --pipeline        send every HTTP request (--get/--post) in one write,
                    then read the responses; otherwise each is sent and
                    answered in turn. Always on one connection.
  --slow-read       read responses 4 KB at a time with short pauses
  --stall S         wait S seconds before reading each response (the
                    socket buffers on the way fill up)
  --timeout S       bound on every wait (default 5)

Actions, in order:
  --clear TEXT      send TEXT in clear, before the handshake (a PROXY header)
  --clear-with-hello TEXT  send TEXT in clear and the ClientHello in the
                    same write, then go on with the handshake
  --hello-part N    send the first N bytes of a ClientHello, nothing more
                    (--expect-close then reads the socket itself)
  --sleep S         wait S seconds
  --reset           close at once with a TCP reset (SO_LINGER 0)
  --info            handshake, then print "version=V cipher=C alpn=A cn=CN
                    resumed=0|1"
  --reconnect       close, and connect again offering the TLS session of
                    the connection just closed (resumption); the next
                    actions use the new connection
  --refused         the server must refuse the connection: the handshake
                    fails, or (TLS 1.3 client certificates are judged after
                    the client's Finished) the first read after it does.
                    Prints "refused: <reason>"; exit 1 if a response comes.
  --get N[:chunked]          GET /bytes/N (see origin.py): body checked
  --post N[:chunked][:rchunked]  POST N bytes to /echo, request body chunked
                    or not, response asked chunked or not: echo checked
  --request TEXT    send an HTTP request and print the response's status
                    line and body (small answers of `http-request return`)
  --send TEXT       send application data (\\n, \\r, \\xHH escapes allowed)
  --expect TEXT     read application data until TEXT came in full (exact)
  --close-notify    send a close_notify, keep reading
  --shutw           close_notify, then TCP shutdown(SHUT_WR)
  --expect-close    read until the server closes; fail on any data
Each HTTP response prints "<status> len=<n> conn=<X-Conn> req=<X-Req>";
a body that differs from what was expected is an error. Exit 0 on
success, 1 with a message on stderr otherwise.
"""
import argparse
import hashlib
import random
import socket
import ssl
import struct
import sys
import time

VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


def unescape(s):
    return s.encode().decode("unicode_escape").encode("latin-1")


def body_of(n):
    return random.Random(n).randbytes(n)


class Closed(Exception):
    pass


class TLSConn:
    def __init__(self, sock, ctx, sni, slow=False, stall=0.0, session=None):
        self.sock = sock
        self.inc = ssl.MemoryBIO()
        self.out = ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_side=False, server_hostname=sni,
                                session=session)
        self.slow = slow
        self.stall = stall
        self.buf = b""

    def flush(self):
        data = self.out.read()
        if data:
            self.sock.sendall(data)

    def feed(self):
        if self.slow:
            time.sleep(0.002)
        data = self.sock.recv(4096 if self.slow else 262144)
        if data:
            self.inc.write(data)
        else:
            self.inc.write_eof()

    def handshake(self):
        while True:
            try:
                self.obj.do_handshake()
                self.flush()
                return
            except ssl.SSLWantReadError:
                self.flush()
                self.feed()

    def send(self, data):
        self.obj.write(data)
        self.flush()

    def recv(self):
        """Some application data, or b"" at the end of the stream."""
        while True:
            try:
                return self.obj.read(262144)
            except ssl.SSLWantReadError:
                self.flush()
                self.feed()
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return b""

    def fill(self):
        data = self.recv()
        if not data:
            raise Closed("connection closed after %r" % self.buf[-200:])
        self.buf += data

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        i = self.buf.index(b"\r\n")
        out, self.buf = self.buf[:i], self.buf[i + 2:]
        return out

    def exact(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def close_notify(self):
        try:
            self.obj.unwrap()
        except ssl.SSLWantReadError:
            pass   # sent; the peer's own close_notify is not awaited
        self.flush()


def make_ctx(a):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if a.ca:
        ctx.load_verify_locations(a.ca)
        ctx.check_hostname = bool(a.sni) and a.check_name
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if a.cert:
        ctx.load_cert_chain(a.cert)
    if a.alpn:
        ctx.set_alpn_protocols(a.alpn.split(","))
    if a.min_ver:
        ctx.minimum_version = VERSIONS[a.min_ver]
    if a.max_ver:
        ctx.maximum_version = VERSIONS[a.max_ver]
    if a.ciphers:
        ctx.set_ciphers(a.ciphers)
    return ctx


def build_request(a, spec):
    kind, arg = spec
    parts = arg.split(":")
    n = int(parts[0])
    opts = parts[1:]
    if kind == "get":
        target = "/bytes/%d%s" % (n, "?chunked" if "chunked" in opts else "")
        return (b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), a.host.encode()),
                body_of(n))
    body = body_of(n)
    target = "/echo%s" % ("?chunked" if "rchunked" in opts else "")
    if "chunked" in opts:
        pieces, i, step = [], 0, 5
        while i < n:
            piece = body[i:i + step]
            pieces.append(b"%x\r\n%s\r\n" % (len(piece), piece))
            i += len(piece)
            step = step * 5 + 3 if step < 50000 else 777
        pieces.append(b"0\r\n\r\n")
        head = b"POST %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n" % (
            target.encode(), a.host.encode())
        return head + b"".join(pieces), body
    head = b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n" % (
        target.encode(), a.host.encode(), n)
    return head + body, body


def read_response(t):
    status = t.line().decode("latin-1")
    headers = {}
    while True:
        h = t.line()
        if not h:
            break
        k, v = h.decode("latin-1").split(":", 1)
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(t.line().split(b";")[0], 16)
            if size == 0:
                while t.line():
                    pass
                break
            parts.append(t.exact(size))
            if t.exact(2) != b"\r\n":
                raise ValueError("bad chunk end")
        body = b"".join(parts)
    elif "content-length" in headers:
        body = t.exact(int(headers["content-length"]))
    else:
        raise ValueError("response without length: %s" % status)
    return status, headers, body


def check_response(t, expected):
    if t.stall:
        time.sleep(t.stall)
    status, headers, body = read_response(t)
    code = status.split(" ")[1]
    print("%s len=%d conn=%s req=%s" % (code, len(body), headers.get("x-conn", "-"),
                                         headers.get("x-req", "-")))
    if code != "200":
        raise ValueError("status %s" % status)
    if body != expected:
        raise ValueError("body differs: %d bytes, sha256 %s, expected %d bytes, sha256 %s" % (
            len(body), hashlib.sha256(body).hexdigest()[:16], len(expected),
            hashlib.sha256(expected).hexdigest()[:16]))


class Step(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        ns.steps.append((self.dest, values))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--sni")
    p.add_argument("--ca")
    p.add_argument("--check-name", action="store_true")
    p.add_argument("--cert")
    p.add_argument("--alpn")
    p.add_argument("--min-ver", choices=VERSIONS)
    p.add_argument("--max-ver", choices=VERSIONS)
    p.add_argument("--ciphers")
    p.add_argument("--host-header", dest="host_header", default="test.local")
    p.add_argument("--rcvbuf", type=int)
    p.add_argument("--pipeline", action="store_true")
    p.add_argument("--slow-read", action="store_true")
    p.add_argument("--stall", type=float, default=0.0)
    p.add_argument("--timeout", type=float, default=5.0)
    p.set_defaults(steps=[])
    for name in ("clear", "clear-with-hello", "hello-part", "sleep", "get", "post", "request", "send", "expect"):
        p.add_argument("--" + name, dest=name.replace("-", "_"), action=Step)
    for name in ("info", "refused", "close-notify", "shutw", "expect-close", "reset",
                 "reconnect"):
        p.add_argument("--" + name, dest=name.replace("-", "_"), action=Step, nargs=0)
    a = p.parse_args()
    a.host_arg, a.host = a.host, a.host_header

    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if a.rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
    s.settimeout(a.timeout)
    s.connect((a.host_arg, a.port))
    ctx = make_ctx(a)
    t = TLSConn(s, ctx, a.sni, a.slow_read, a.stall)
    shaken = False
    raw = False   # after --hello-part: no TLS any more, only the socket

    def ensure_handshake():
        nonlocal shaken
        if not shaken:
            t.handshake()
            shaken = True

    steps = a.steps
    if a.pipeline:
        reqs = [st for st in steps if st[0] in ("get", "post")]
        steps = [st for st in steps if st[0] not in ("get", "post")] + [("pipeline", reqs)]
    for kind, val in steps:
        if kind == "clear":
            s.sendall(unescape(val))
        elif kind == "clear_with_hello":
            try:
                t.obj.do_handshake()
            except ssl.SSLWantReadError:
                pass
            s.sendall(unescape(val) + t.out.read())
        elif kind == "hello_part":
            try:
                t.obj.do_handshake()
            except ssl.SSLWantReadError:
                pass
            s.sendall(t.out.read()[:int(val)])
            raw = True
        elif kind == "sleep":
            time.sleep(float(val))
        elif kind == "reset":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            return
        elif kind == "info":
            ensure_handshake()
            cert = t.obj.getpeercert() or {}
            cn = "-"
            for rdn in cert.get("subject", ()):
                for k, v in rdn:
                    if k == "commonName":
                        cn = v
            print("version=%s cipher=%s alpn=%s cn=%s resumed=%d" % (
                t.obj.version(), t.obj.cipher()[0], t.obj.selected_alpn_protocol(), cn,
                t.obj.session_reused))
        elif kind == "reconnect":
            ensure_handshake()
            sess = t.obj.session
            s.close()
            s = socket.create_connection((a.host_arg, a.port), timeout=a.timeout)
            t = TLSConn(s, ctx, a.sni, a.slow_read, a.stall, session=sess)
            shaken = False
        elif kind == "refused":
            try:
                t.handshake()
                t.send(b"GET /bytes/1 HTTP/1.1\r\nHost: %s\r\n\r\n" % a.host.encode())
                data = t.recv()
            except (ssl.SSLError, ConnectionError) as e:
                print("refused: %s" % (getattr(e, "reason", None) or e.__class__.__name__))
                continue
            if data:
                sys.exit("not refused: received %r" % data[:100])
            print("refused: closed")
        elif kind in ("get", "post"):
            ensure_handshake()
            raw, expected = build_request(a, (kind, val))
            if kind == "post":
                expected = body_of(int(val.split(":")[0]))
            t.send(raw)
            check_response(t, expected)
        elif kind == "pipeline":
            ensure_handshake()
            built = [build_request(a, st) for st in val]
            t.send(b"".join(r for r, _ in built))
            for _, expected in built:
                check_response(t, expected)
        elif kind == "request":
            ensure_handshake()
            t.send(unescape(val))
            status, _, body = read_response(t)
            print(status)
            sys.stdout.write(body.decode("latin-1"))
            sys.stdout.flush()
        elif kind == "send":
            ensure_handshake()
            t.send(unescape(val))
        elif kind == "expect":
            ensure_handshake()
            want = unescape(val)
            got = t.exact(len(want))
            if got != want:
                sys.exit("received %r, expected %r" % (got, want))
        elif kind == "close_notify":
            ensure_handshake()
            t.close_notify()
        elif kind == "shutw":
            ensure_handshake()
            t.close_notify()
            s.shutdown(socket.SHUT_WR)
        elif kind == "expect_close" and raw:
            data = s.recv(4096)
            if data:
                sys.exit("expected the close, received %r" % data[:100])
        elif kind == "expect_close":
            ensure_handshake()
            data = t.buf or t.recv()
            if data:
                sys.exit("expected the close, received %r" % data[:100])
    s.close()


if __name__ == "__main__":
    try:
        main()
    except (ValueError, Closed, ssl.SSLError, OSError) as e:
        sys.exit("%s: %s" % (e.__class__.__name__, e))
