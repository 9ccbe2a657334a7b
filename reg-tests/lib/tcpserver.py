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
  --expect-pp2 SPEC  read a PROXY v2 header and check its fields:
                     "key=regex;key=regex...", each regex matching the whole
                     value; keys: cmd (LOCAL/PROXY), src, dst, tlvs (the TLV
                     type names in order, comma-separated), authority,
                     unique_id, crc32c ("ok" when the checksum is right),
                     ssl.client, ssl.verify (decimal), ssl.version, ssl.cn,
                     ssl.cipher, ssl.sig_alg, ssl.key_alg, ssl.subs (the
                     sub-TLV names in order)
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


PP2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"
PP2_NAMES = {0x01: "alpn", 0x02: "authority", 0x03: "crc32c", 0x04: "noop",
             0x05: "unique_id", 0x20: "ssl", 0x30: "netns"}
PP2_SSL_NAMES = {0x21: "version", 0x22: "cn", 0x23: "cipher", 0x24: "sig_alg",
                 0x25: "key_alg"}


def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82f63b78 if crc & 1 else crc >> 1
    return crc ^ 0xffffffff


def tlv_walk(data):
    """(type, value, offset of the value) of each TLV of <data>."""
    i = 0
    while i < len(data):
        if i + 3 > len(data):
            sys.exit("truncated TLV at %d: %r" % (i, data[i:]))
        t, n = data[i], int.from_bytes(data[i + 1:i + 3], "big")
        if i + 3 + n > len(data):
            sys.exit("TLV 0x%02x of %d bytes overflows: %r" % (t, n, data[i:]))
        yield t, data[i + 3:i + 3 + n], i + 3
        i += 3 + n


def read_pp2(c):
    """The fields of a PROXY v2 header, as strings."""
    hdr = read_exact(c, 16)
    if hdr[:12] != PP2_SIG or hdr[12] >> 4 != 2:
        sys.exit("not a PROXY v2 header: %r" % hdr)
    body = read_exact(c, int.from_bytes(hdr[14:16], "big"))
    f = {"cmd": "PROXY" if hdr[12] & 0x0f == 1 else "LOCAL"}
    fam, blk = hdr[13], 0
    if fam == 0x11:
        blk = 12
        f["src"] = "%s:%d" % (socket.inet_ntop(socket.AF_INET, body[0:4]),
                              int.from_bytes(body[8:10], "big"))
        f["dst"] = "%s:%d" % (socket.inet_ntop(socket.AF_INET, body[4:8]),
                              int.from_bytes(body[10:12], "big"))
    elif fam == 0x21:
        blk = 36
        f["src"] = "[%s]:%d" % (socket.inet_ntop(socket.AF_INET6, body[0:16]),
                                int.from_bytes(body[32:34], "big"))
        f["dst"] = "[%s]:%d" % (socket.inet_ntop(socket.AF_INET6, body[16:32]),
                                int.from_bytes(body[34:36], "big"))
    elif fam == 0x31:
        blk = 216
    names = []
    for t, v, off in tlv_walk(body[blk:]):
        name = PP2_NAMES.get(t, "0x%02x" % t)
        names.append(name)
        if t == 0x03:
            whole = bytearray(hdr + body)
            pos = 16 + blk + off
            whole[pos:pos + 4] = b"\0\0\0\0"
            f["crc32c"] = "ok" if crc32c(bytes(whole)) == int.from_bytes(v, "big") \
                else "bad"
        elif t == 0x20:
            f["ssl.client"] = "%d" % v[0]
            f["ssl.verify"] = "%d" % int.from_bytes(v[1:5], "big")
            subs = []
            for st, sv, _ in tlv_walk(v[5:]):
                sname = PP2_SSL_NAMES.get(st, "0x%02x" % st)
                subs.append(sname)
                f["ssl." + sname] = sv.decode("latin-1")
            f["ssl.subs"] = ",".join(subs)
        else:
            f[name] = v.decode("latin-1")
    f["tlvs"] = ",".join(names)
    return f


def check_pp2(c, spec):
    f = read_pp2(c)
    for item in spec.split(";"):
        key, _, want = item.partition("=")
        if not re.fullmatch(want, f.get(key, "<none>")):
            sys.exit("PROXY v2 %s is %r, expected %r (header: %r)"
                     % (key, f.get(key), want, f))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("listen", help="/unix/path or host:port")
    p.add_argument("--timeout", type=float, default=5.0)
    p.set_defaults(steps=[])
    for name in ("expect", "expect_hex", "expect_line_re", "expect_pp2", "send"):
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
            elif kind == "expect_pp2":
                check_pp2(c, val)
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
