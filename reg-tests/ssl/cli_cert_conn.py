#!/usr/bin/env python3
"""Helper of cli_cert_commit.vtc: a TLS connection made before a commit
keeps working after it, while new handshakes see the new certificate.

usage: cli_cert_conn.py <addr> <port> <sni> <cli_addr> <cli_port> <cli_text_file> <new_cn>

1. connects to <addr>:<port> (SNI <sni>), one HTTP/1.1 request, notes the
   certificate's subject;
2. sends the CLI text of <cli_text_file> to <cli_addr>:<cli_port> (a set
   and a commit) and prints the answer;
3. a second request on the first connection: answered, same certificate;
4. a new connection: its certificate's subject contains CN=<new_cn>.
Exits 0 if all of this holds.
"""
import socket
import ssl
import subprocess
import sys


def connect(addr, port, sni):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection((addr, port), timeout=5)
    return ctx.wrap_socket(raw, server_hostname=sni)


def subject(conn):
    pem = ssl.DER_cert_to_PEM_cert(conn.getpeercert(binary_form=True))
    out = subprocess.run(["openssl", "x509", "-noout", "-subject"], input=pem.encode(),
                         capture_output=True, check=True)
    return out.stdout.decode().strip()


def request(conn):
    conn.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise RuntimeError("connection closed before a response")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            raise RuntimeError("connection closed in a response body")
        body += chunk
    return head.split(b"\r\n")[0].decode()


def cli(addr, port, text):
    with socket.create_connection((addr, port), timeout=5) as s:
        s.sendall(text)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return out.decode()
            out += chunk


def main():
    addr, port, sni, cli_addr, cli_port, cli_file, new_cn = sys.argv[1:8]
    first = connect(addr, int(port), sni)
    status = request(first)
    before = subject(first)
    print("before:", status, before)
    if " 200 " not in status + " ":
        return 1
    with open(cli_file, "rb") as f:
        print(cli(cli_addr, int(cli_port), f.read()), end="")
    status = request(first)
    print("same connection after:", status, subject(first))
    if " 200 " not in status + " " or subject(first) != before:
        return 1
    second = connect(addr, int(port), sni)
    after = subject(second)
    print("new connection:", request(second), after)
    first.close()
    second.close()
    return 0 if "CN = " + new_cn in after else 1


if __name__ == "__main__":
    sys.exit(main())
