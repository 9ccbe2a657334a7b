#!/usr/bin/env python3
"""Seed corpus of fuzz/fuzz_h2c.c: HTTP/2 conversations in both roles.

Each seed is a mode byte (see fuzz_h2c.c) followed by wire bytes: client
bytes for the server role (preface, SETTINGS, requests: GET, POST with
content-length and DATA, cookies, CONNECT, extended CONNECT, trailers,
RST_STREAM, PING, WINDOW_UPDATE, GOAWAY), server bytes for the client role
(SETTINGS, responses to streams 1, 3 and 5). Headers are HPACK literals
without indexing (RFC 7541 section 6.2.2) plus a few indexed ones, so the
fuzzer sees both.

Run from the repository root: python3 fuzz/h2c_seeds.py
"""
import os
import struct

OUT = "fuzz/corpus/h2c"
MAGIC = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(ftype, flags, sid, payload=b""):
    n = len(payload)
    return struct.pack(">BHBBI", n >> 16, n & 0xffff, ftype, flags, sid) + payload


def lit(name, value):
    name, value = name.encode(), value.encode()
    assert len(name) < 127 and len(value) < 127
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def block(*pairs):
    return b"".join(lit(n, v) for n, v in pairs)


def headers(sid, pairs, es=True):
    return frame(1, END_HEADERS | (END_STREAM if es else 0), sid, block(*pairs))


def settings(*kv):
    return frame(4, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in kv))


GET = [(":method", "GET"), (":scheme", "https"), (":path", "/p?q"),
       (":authority", "example.com:443")]

SEEDS = {
    # server role, mode 0: the preface comes from the input
    "srv_get": b"\x00" + MAGIC + settings() + headers(1, GET),
    "srv_get_indexed": b"\x00" + MAGIC + settings() +
        frame(1, END_HEADERS | END_STREAM, 1, b"\x82\x87\x84\x41\x0bexample.com"),
    "srv_post_cl": b"\x00" + MAGIC + settings((4, 65535)) +
        headers(1, [(":method", "POST"), (":scheme", "https"), (":path", "/u"),
                    (":authority", "a"), ("content-length", "5")], es=False) +
        frame(0, END_STREAM, 1, b"hello"),
    "srv_cookies_host": b"\x02" + headers(1, GET + [("cookie", "a=1"), ("host", "x"),
                                                     ("cookie", "b=2")]),
    "srv_connect": b"\x02" + headers(1, [(":method", "CONNECT"),
                                         (":authority", "t.example:443")], es=False) +
        frame(0, 0, 1, b"tunnel"),
    "srv_ext_connect": b"\x02" + headers(1, [(":method", "CONNECT"),
                                             (":protocol", "websocket"),
                                             (":scheme", "https"), (":path", "/ws"),
                                             (":authority", "a")], es=False) +
        frame(0, 0, 1, b"\x81\x00"),
    "srv_trailers": b"\x02" + headers(1, GET[:2] + [(":path", "/t"), (":authority", "a")],
                                      es=False) +
        frame(0, 0, 1, b"body") + headers(1, [("x-t", "1")]),
    "srv_reset_ping_wu": b"\x06" + headers(1, GET) + frame(3, 0, 1, b"\0\0\0\x08") +
        frame(6, 0, 0, b"12345678") + frame(8, 0, 0, b"\0\0\x10\0") +
        headers(3, GET) + frame(7, 0, 0, b"\0\0\0\x03\0\0\0\0"),
    "srv_continuation": b"\x02" + frame(1, END_STREAM, 1, block(*GET[:2])) +
        frame(9, END_HEADERS, 1, block(*GET[2:])),
    "srv_hold_shutdown": b"\x62" + headers(1, GET) + headers(3, GET) +
        frame(6, ACK, 0, b"sluicega"),
    "srv_drop_streams": b"\x82" + headers(1, GET) + headers(3, GET) + headers(5, GET) +
        frame(0, END_STREAM, 3, b""),
    # client role, mode 1|2: the server's SETTINGS are prepended
    "cli_responses": b"\x03" + frame(4, ACK, 0) +
        headers(1, [(":status", "200"), ("content-length", "2")], es=False) +
        frame(0, END_STREAM, 1, b"ok") +
        headers(3, [(":status", "103"), ("link", "</s>")], es=False) +
        headers(3, [(":status", "204")]),
    "cli_ext_connect": b"\x01" + settings((8, 1), (3, 10)) + frame(4, ACK, 0) +
        headers(1, [(":status", "200")]) + headers(5, [(":status", "200")], es=False) +
        frame(0, 0, 5, b"frames"),
    "cli_goaway": b"\x03" + headers(1, [(":status", "200")], es=False) +
        frame(0, 0, 1, b"x" * 100) + frame(7, 0, 0, b"\0\0\0\x01\0\0\0\0") +
        headers(1, [("x-trailer", "t")]),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
