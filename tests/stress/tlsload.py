#!/usr/bin/env python3
"""HTTPS load for test_cert_swap.sh: for <seconds>, <conns> clients each
open a new TLS connection per request (a full handshake: no session is
offered), and <keepalive> clients send requests on one connection they keep
for the whole run. Every request must get a 200 with the body "ok".

usage: tlsload.py <host> <port> <sni> <seconds> <conns> <keepalive> <name>...

Each response's certificate is matched against the <name>s (bytes of its
DER form): the output counts the handshakes that saw each one.
Last line: "requests=N failures=N keepalive_requests=N <name>=N ...".
Exit status 0 if there was no failure.
"""
import socket
import ssl
import sys
import threading
import time

HOST, PORT, SNI = sys.argv[1], int(sys.argv[2]), sys.argv[3]
SECONDS, CONNS, KEEPALIVE = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
NAMES = sys.argv[7:]

CTX = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
CTX.check_hostname = False
CTX.verify_mode = ssl.CERT_NONE

lock = threading.Lock()
stats = {"requests": 0, "failures": 0, "keepalive_requests": 0}
seen = {n: 0 for n in NAMES}
errors = []


def connect():
    raw = socket.create_connection((HOST, PORT), timeout=10)
    return CTX.wrap_socket(raw, server_hostname=SNI)


def request(conn):
    conn.sendall(b"GET / HTTP/1.1\r\nHost: " + SNI.encode() + b"\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise RuntimeError("closed before a response")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        raise RuntimeError("no content-length: %r" % head)
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            raise RuntimeError("closed in a body")
        body += chunk
    status = head.split(b"\r\n")[0]
    if not status.startswith(b"HTTP/1.1 200") or body != b"ok":
        raise RuntimeError("bad response: %r %r" % (status, body))


def fail(what):
    with lock:
        stats["failures"] += 1
        if len(errors) < 10:
            errors.append(what)


def new_conn_client(deadline):
    while time.monotonic() < deadline:
        try:
            conn = connect()
            der = conn.getpeercert(binary_form=True)
            request(conn)
            conn.close()
        except Exception as e:  # noqa: BLE001 - every failure counts
            fail("new connection: %r" % e)
            continue
        with lock:
            stats["requests"] += 1
            for n in NAMES:
                if n.encode() in der:
                    seen[n] += 1


def keepalive_client(deadline):
    try:
        conn = connect()
    except Exception as e:  # noqa: BLE001
        fail("keep-alive connect: %r" % e)
        return
    while time.monotonic() < deadline:
        try:
            request(conn)
        except Exception as e:  # noqa: BLE001
            fail("keep-alive request: %r" % e)
            return
        with lock:
            stats["keepalive_requests"] += 1
        time.sleep(0.01)
    conn.close()


def main():
    deadline = time.monotonic() + SECONDS
    threads = [threading.Thread(target=new_conn_client, args=(deadline,)) for _ in range(CONNS)]
    threads += [threading.Thread(target=keepalive_client, args=(deadline,))
                for _ in range(KEEPALIVE)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print("error:", e)
    print(" ".join("%s=%d" % kv for kv in list(stats.items()) + list(seen.items())))
    return 1 if stats["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
