#!/usr/bin/env python3
"""ssl_hello_diff.py: the req.ssl_* fetches of HAProxy 2.6 and sluice on the
same bytes; prints the inputs where they answer differently.

Each input (below) is sent on its own connection to a TCP-mode frontend
whose rules store every fetch in a variable at the end of a short
inspect-delay (`if WAIT_END`), and a few ACLs (ALPN names, versions
written MAJOR.MINOR, SNI without case); the values are logged over UDP
syslog when the session ends (its server refuses connections). A second
frontend per fetch tells whether a condition on it waits for more data
("wait") or decides at once ("now"): `accept if { <fetch> -m found }`,
then `reject`, timed by the client.

Inputs: the real hellos of fuzz/corpus/ssl_hello/tls* (captured from
`openssl s_client`), each truncated at many lengths, followed by more data,
split over two records, and with mutated record types, versions, lengths;
hellos rebuilt with edited extensions (missing, empty, repeated,
overflowing, trailing bytes); SSLv2 CLIENT-HELLOs; and non-TLS bytes.

A tool, not a test (`make test` does not run it): it takes about a minute
and a half. The differences it prints are sluice's documented choices
(doc/configuration.md, "Fetches: TLS ClientHello"); anything else is a bug.
Exit status 0 when both sides agree everywhere, 1 otherwise.

Usage: tests/compat/ssl_hello_diff.py [-k REGEX] [-v]
  -k REGEX  only the inputs whose name matches REGEX
  -v        print each side's whole answer for the differing inputs
Environment: SLUICE (default ./sluice), HAPROXY (default /usr/sbin/haproxy)
"""
import argparse
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

FETCHES = ["req.ssl_hello_type", "req.ssl_ver", "req.ssl_sni", "req.ssl_alpn",
           "req.ssl_ec_ext", "req.ssl_st_ext"]
ACLS = {"alpn_h11": "req.ssl_alpn http/1.1", "alpn_h2": "req.ssl_alpn h2",
        "ver33": "req.ssl_ver 3.3", "ver3x": "req.ssl_ver 3:3.1",
        "sni_a": "req_ssl_sni -i A.EXAMPLE", "ht1": "req_ssl_hello_type 1",
        "vergt31": "req.ssl_ver gt 3.1", "verlt33": "req.ssl_ver lt 3.3"}
DELAY = 0.4

# ------------------------------------------------------------------ inputs


def setb(h, i, v):
    return h[:i] + bytes([v & 0xff]) + h[i + 1:]


def relen16(h, at, delta):
    return h[:at] + struct.pack(">H", (h[at] << 8 | h[at + 1]) + delta) + h[at + 2:]


def relen24(h, at, delta):
    v = h[at] << 16 | h[at + 1] << 8 | h[at + 2]
    return h[:at] + struct.pack(">I", v + delta)[1:] + h[at + 3:]


def fragment(h, cut):
    """the handshake message of a one-record hello in two records"""
    body = h[5:]
    a, b = body[:cut], body[cut:]
    return (h[:3] + struct.pack(">H", len(a)) + a + h[:3] + struct.pack(">H", len(b)) + b)


def split_hello(h):
    """(everything before the extensions length, [(type, data)])"""
    p = 5 + 4 + 2 + 32
    p += 1 + h[p]
    p += 2 + (h[p] << 8 | h[p + 1])
    p += 1 + h[p]
    end = p + 2 + (h[p] << 8 | h[p + 1])
    q, exts = p + 2, []
    while q < end:
        t, l = h[q] << 8 | h[q + 1], h[q + 2] << 8 | h[q + 3]
        exts.append((t, h[q + 4:q + 4 + l]))
        q += 4 + l
    return h[:p], exts


def join_hello(prefix, exts, block=None, trailing=b""):
    if block is None:
        block = b"".join(struct.pack(">HH", t, len(d)) + d for t, d in exts)
    body = prefix[5:] + struct.pack(">H", len(block)) + block + trailing
    msg = body[:1] + struct.pack(">I", len(body) - 4)[1:] + body[4:]
    return prefix[:3] + struct.pack(">H", len(msg)) + msg


def ext_cases(h):
    pre, exts = split_hello(h)
    blk = b"".join(struct.pack(">HH", t, len(d)) + d for t, d in exts)

    def rename(t, nt):
        return [(nt if x == t else x, d) for x, d in exts]

    def drop(t):
        return [(x, d) for x, d in exts if x != t]

    def put(t, d):
        return drop(t) + [(t, d)]

    def sni(*names, typ=0):
        l = b"".join(bytes([typ]) + struct.pack(">H", len(n)) + n for n in names)
        return struct.pack(">H", len(l)) + l

    def alpn(*names):
        l = b"".join(bytes([len(n)]) + n for n in names)
        return struct.pack(">H", len(l)) + l

    return {
        "no_groups": join_hello(pre, rename(10, 0x1234)),
        "no_point_formats": join_hello(pre, rename(11, 0x1235)),
        "no_ext": join_hello(pre, [], block=b""),
        "sni_first": join_hello(pre, [(0, sni(b"first.example"))] + drop(0)),
        "sni_two_names": join_hello(pre, put(0, sni(b"one.example", b"two.example"))),
        "sni_type1_first": join_hello(pre, put(0, b"\x00\x12\x01\x00\x03abc\x00\x00\x09a.example")),
        "sni_empty_name": join_hello(pre, put(0, sni(b""))),
        "sni_name_overflow": join_hello(pre, put(0, b"\x00\x0c\x00\x00\x20a.example")),
        "sni_list_under": join_hello(pre, put(0, b"\x00\x0a\x00\x00\x09a.example")),
        "sni_twice": join_hello(pre, exts + [(0, sni(b"dup.example"))]),
        "sni_upper": join_hello(pre, put(0, sni(b"A.Example"))),
        "alpn_three": join_hello(pre, put(16, alpn(b"h3", b"h2", b"http/1.1"))),
        "alpn_empty_name": join_hello(pre, put(16, alpn(b"h2", b"", b"http/1.1"))),
        "alpn_empty_list": join_hello(pre, put(16, b"\x00\x00")),
        "ticket": join_hello(pre, put(35, b"T" * 100)),
        "no_ticket": join_hello(pre, drop(35)),
        "ext_trailing": join_hello(pre, exts, block=blk + b"\x00"),
        "ext_overflow_last": join_hello(pre, exts, block=blk + b"\x12\x34\x00\x10ab"),
        "msg_trailing": join_hello(pre, exts, trailing=b"JUNK"),
        "versions_bad": join_hello(pre, put(43, b"\x03\x03\x04")),
    }


def cases(hellos):
    c = {}
    for name, h in hellos.items():
        c[name] = h
        n = len(h)
        for l in sorted(set(list(range(0, 12)) + list(range(12, n, 23)) +
                            list(range(n - 6, n)))):
            c["%s_trunc%d" % (name, l)] = h[:l]
        c[name + "_plus_data"] = h + b"\x17\x03\x03\x00\x05hello"
        for cut in (2, 4, 50):
            c["%s_frag%d" % (name, cut)] = fragment(h, cut)
        for t in (0x14, 0x17, 0xff):
            c["%s_rectype%02x" % (name, t)] = setb(h, 0, t)
        c[name + "_recver2"] = setb(h, 1, 2)
        c[name + "_recver4"] = setb(h, 1, 4)
        c[name + "_hstype2"] = setb(h, 5, 2)
        for d in (-1, 1):
            c["%s_reclen%+d" % (name, d)] = relen16(h, 3, d)
            c["%s_hslen%+d" % (name, d)] = relen24(h, 6, d)
        c[name + "_hslen-4"] = relen24(h, 6, -4)
        for v in (b"\x03\x00", b"\x04\x00", b"\x02\x02"):
            c["%s_cver%s" % (name, v.hex())] = h[:9] + v + h[11:]
        c[name + "_sidlen33"] = setb(h, 43, 33)
        if name in ("tls13_sni_alpn", "tls12_ticket"):
            for k, v in ext_cases(h).items():
                c["%s_x_%s" % (name, k)] = v
    c["empty"] = b""
    c["http"] = b"GET / HTTP/1.0\r\n\r\n"
    c["g"] = b"G"
    c["zeros"] = b"\0" * 64
    c["empty_client_hello"] = b"\x16\x03\x01\x00\x04\x01\x00\x00\x00"
    c["app_data"] = b"\x17\x03\x03\x00\x04\x01\x00\x00\x00"
    specs = bytes.fromhex("00000400000500000a")
    body = b"\x01\x03\x01" + struct.pack(">HHH", len(specs), 0, 16) + specs + b"C" * 16
    c["sslv2"] = struct.pack(">H", 0x8000 | len(body)) + body
    c["sslv2_trunc10"] = c["sslv2"][:10]
    c["sslv2_ver20"] = c["sslv2"][:3] + b"\x00\x02" + c["sslv2"][5:]
    c["sslv2_3byte_header"] = struct.pack(">H", len(body)) + b"\x02" + body + b"PP"
    return c


# ------------------------------------------------------------------ running


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def config(ports, logport, dead):
    ms = int(DELAY * 1000)
    v = ["global", "  log 127.0.0.1:%d local0" % logport, "defaults", "  mode tcp",
         "  timeout connect 1s", "  timeout client 5s", "  timeout server 5s", "  retries 0",
         "backend dead", "  server s 127.0.0.1:%d" % dead,
         "frontend fv", "  bind 127.0.0.1:%d" % ports["fv"], "  log global",
         "  tcp-request inspect-delay %dms" % ms]
    lf = "V %ci:%cp"
    for i, f in enumerate(FETCHES):
        v.append("  tcp-request content set-var(sess.f%d) %s if WAIT_END" % (i, f))
        lf += " %s=%%[var(sess.f%d),hex]" % (f.split(".")[1], i)
    for n, a in ACLS.items():
        v.append("  tcp-request content set-var(sess.%s) int(1) if WAIT_END { %s }" % (n, a))
        lf += " %s=%%[var(sess.%s)]" % (n, n)
    v += ['  log-format "%s"' % lf, "  default_backend dead"]
    for i, f in enumerate(FETCHES):
        v += ["frontend ft%d" % i, "  bind 127.0.0.1:%d" % ports["ft%d" % i],
              "  tcp-request inspect-delay %dms" % ms,
              "  tcp-request content accept if { %s -m found }" % f,
              "  tcp-request content reject", "  default_backend dead"]
    return "\n".join(v) + "\n"


def connect_send(port, data, res, key, idx):
    # one source address per connection: the log lines are told apart by it
    s = socket.socket()
    s.bind(("127.%d.%d.%d" % (1 + idx // 62500, (idx // 250) % 250, 1 + idx % 250), 0))
    s.connect(("127.0.0.1", port))
    src = "%s:%d" % s.getsockname()
    s.sendall(data)
    t0 = time.time()
    s.settimeout(3)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()
    res[key] = (src, "wait" if time.time() - t0 > DELAY / 2 else "now")


def run(prog, cases):
    """{name: {field: value}} as <prog> answers"""
    ports = {"fv": free_port()}
    for i in range(len(FETCHES)):
        ports["ft%d" % i] = free_port()
    logsock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    logsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    logsock.bind(("127.0.0.1", 0))
    logsock.settimeout(0.2)
    tmp = tempfile.mkdtemp(prefix="ssl_hello_diff.")
    cfg = os.path.join(tmp, "cfg")
    with open(cfg, "w") as f:
        f.write(config(ports, logsock.getsockname()[1], free_port()))
    proc = subprocess.Popen([prog, "-d", "-f", cfg], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    logs, res, stop = {}, {}, []

    def reader():
        while not stop:
            try:
                m = re.search(r"V ([0-9.]+:\d+) (.*)", logsock.recv(65536).decode("latin-1"))
            except socket.timeout:
                continue
            if m:
                logs[m.group(1)] = m.group(2).strip()

    try:
        time.sleep(0.5)
        th = threading.Thread(target=reader)
        th.start()
        jobs = []
        for name, data in cases.items():
            jobs.append((ports["fv"], data, res, (name, "v"), len(jobs)))
            for i in range(len(FETCHES)):
                jobs.append((ports["ft%d" % i], data, res, (name, i), len(jobs)))
        for at in range(0, len(jobs), 40):
            batch = [threading.Thread(target=connect_send, args=j) for j in jobs[at:at + 40]]
            for t in batch:
                t.start()
            for t in batch:
                t.join()
        time.sleep(0.5)
    finally:
        stop.append(1)
        proc.terminate()
        proc.wait()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    th.join()
    out = {}
    for name in cases:
        line = logs.get(res[(name, "v")][0], "")
        vals = dict(kv.split("=", 1) for kv in line.split()) if line else {"log": "none"}
        for i, f in enumerate(FETCHES):
            vals["wait:" + f.split(".")[1]] = res[(name, i)][1]
        out[name] = vals
    return out


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("Usage: ")[1].split("\n")[0])
    ap.add_argument("-k", default="")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    corpus = os.path.join(top, "fuzz", "corpus", "ssl_hello")
    hellos = {}
    for f in sorted(os.listdir(corpus)):
        # the hellos captured as they are (not the seeds derived from them)
        if re.fullmatch(r"tls\d\d(_[a-z]+)*", f) and "_x_" not in f:
            with open(os.path.join(corpus, f), "rb") as fh:
                hellos[f] = fh.read()
    c = {k: v for k, v in cases(hellos).items() if re.search(a.k, k)}
    sluice = os.environ.get("SLUICE", os.path.join(top, "sluice"))
    haproxy = os.environ.get("HAPROXY", "/usr/sbin/haproxy")
    h, s = run(haproxy, c), run(sluice, c)
    ndiff = 0
    for name in c:
        d = ["%s: %s -> %s" % (k, h[name].get(k), s[name].get(k))
             for k in sorted(set(h[name]) | set(s[name])) if h[name].get(k) != s[name].get(k)]
        if d:
            ndiff += 1
            print("%s (HAProxy -> sluice) %s" % (name, "; ".join(d)))
            if a.v:
                print("    HAProxy: %s\n    sluice:  %s" % (h[name], s[name]))
    print("%d inputs, %d differ" % (len(c), ndiff))
    return 1 if ndiff else 0


if __name__ == "__main__":
    sys.exit(main())
