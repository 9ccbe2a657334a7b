#!/usr/bin/env python3
"""sluice benchmarks: sluice and HAProxy side by side on the same config.

One nginx origin (bench/nginx.conf.in); for each scenario, rounds alternate
its two sides (sluice and HAProxy, or two settings of sluice for an A/B),
the order flipping every round, each round starting the proxy afresh and
running wrk against it. For each scenario it prints the median requests/s
and p99 latency of each side, the ratio of medians, the difference of mean
requests/s with its 95% confidence interval (Welch's t), the ratio of
geometric means with its interval, and the proxy's CPU time per request
(from /proc, a cost that other jobs on the machine disturb less than they
disturb requests/s). Not a test: it asserts nothing; numbers go to
doc/benchmarks.md.

Queue scenarios (issue 4) also sample the queue and the number of server
connections half-way through each round; wakeup-ab reads `show activity`
and `show locks` on the stats socket after each round. `flood` is not a
timed comparison but one run per proxy at the most connections the
descriptor limit allows, about half of them queued: it reports errors,
watchdog events, and the proxy's RSS before, at peak and after.
`flood-sluice` is the same for sluice alone, sized by what sluice needs
(one descriptor per client plus its server connections), so about twice
as many clients, all but 500 of them queued.

HTTP/2 scenarios (h2c-100x10, h2-tls-100x10, h2-queue-4000) load the
proxy with h2load (nghttp2-client) instead of wrk: -c connections of -m
concurrent streams each; h2load gives no percentiles, so their latency is
h2load's mean time per request. h1-to-h2-server is wrk toward a proxy whose
server line says `proto h2` (nginx's h2c listener). A side that cannot run
a scenario (a proxy that refuses the configuration or does not start, or a
round where no request succeeds: sluice before it speaks HTTP/2) is
reported as failed with the reason, and the run goes on.

Loopback only; every run is bounded by wrk's duration (and a timeout on
wrk itself). The descriptor limit of this process, inherited by wrk, nginx
and the proxies, is raised to min(20000, hard limit). The sluice binary is
copied once at the start, so that a rebuild during a run cannot mix two
builds. With --perf, one extra run per side and scenario (not counted) is
sampled with `perf record -e cpu-clock -g` and the top symbols are printed.

    python3 bench/bench.py [--rounds N] [--duration S] [--scenario NAME ...]
                           [--scenarios NAME,NAME] [--perf]
                           [--flood-conns N] [--flood-maxconn N]
"""
import argparse
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

CLOSE = ["-H", "Connection: close"]
# a queued request may wait longer than wrk's default 2 s timeout
QUEUE_WRK = ["--timeout", "10s"]
# 4000 clients fit under HAProxy's descriptor check at maxconn 9000 (it
# reserves two descriptors per connection); nothing may time out in a queue
QUEUE_ENV = {"BENCH_MAXCONN": "9000", "BENCH_TIMEOUT_QUEUE": "120s", "BENCH_NBTHREAD": "2"}
FD_LIMIT = 20000
# descriptors neither proxy spends on connections: listeners, pollers,
# eventfds, the stats socket, logs (both count about 30 in maxsock)
FD_RESERVED = 100

# the two sides of a comparison: (label, program, environment overrides)
PROXIES = (("sluice", "sluice", {}), ("haproxy", "haproxy", {}))
WAKEUP_AB = (("instant", "sluice", {"BENCH_WAKEUP": "instant"}),
             ("shared-runqueue", "sluice", {"BENCH_WAKEUP": "shared-runqueue"}))
QUEUE_AB = (("queue", "sluice", {"BENCH_SRV_OPTS": "maxconn 16"}),
            ("noqueue", "sluice", {"BENCH_SRV_OPTS": "weight 1"}))


def scenario(cfg, conns, desc, srv="weight 1", wrk=(), env=None, sides=PROXIES,
             sample=False, probe=False, kind="ab", size="both", scheme="http",
             streams=0, origin="h1", path="/"):
    """sample: queue and server connections half-way through each round;
    probe: `show activity` and `show locks` after each round; streams: load
    with h2load, that many concurrent streams per connection (0: wrk);
    origin: "h1" (nginx's HTTP/1.1 port) or "h2c" (its h2c port); path: what
    the clients ask for (/static/10k, /static/64k: files with ETag and
    Last-Modified, which a cache may store)."""
    return {"cfg": cfg, "conns": conns, "desc": desc, "srv": srv, "wrk": list(wrk),
            "env": env or {}, "sides": sides, "sample": sample, "probe": probe,
            "kind": kind, "size": size, "scheme": scheme, "streams": streams,
            "origin": origin, "path": path}


CERTS = os.path.join(TOP, "reg-tests", "ssl", "certs")


def tls(crt, bind_opts=""):
    return {"BENCH_CRT": os.path.join(CERTS, crt), "BENCH_BIND_OPTS": bind_opts}


def h2env(bind_opts="", **more):
    """bench/h2.cfg's environment: the listener's options, and queue.cfg's
    globals (a queued stream may wait long: nothing times out in a queue)."""
    env = {"BENCH_BIND_OPTS": bind_opts, "BENCH_NBTHREAD": "2", "BENCH_MAXCONN": "9000",
           "BENCH_TIMEOUT_QUEUE": "120s"}
    env.update(more)
    return env


SCENARIOS = {
    "tcp-ka-100": scenario("tcp.cfg", 100, "TCP mode, 100 keep-alive clients, no queue"),
    "tcp-conn-100": scenario("tcp.cfg", 100, "TCP mode, 100 clients, a new connection per request",
                             wrk=CLOSE),
    "http-ka-100": scenario("http.cfg", 100, "HTTP mode, 100 keep-alive clients, no queue"),
    "http-close-100": scenario("http.cfg", 100,
                               "HTTP mode, 100 clients, Connection: close on every request",
                               wrk=CLOSE),
    # diagnosis of http-close-100: the same without idle server connections
    # (with http-reuse safe a first request never takes one anyway)
    "http-close-100-nopool": scenario("http.cfg", 100,
                                      "as http-close-100, idle server pool off (pool-max-conn 0)",
                                      srv="pool-max-conn 0", wrk=CLOSE),
    # issue 4: server queues under overload (bench/queue.cfg)
    "queue-4000": scenario("queue.cfg", 4000,
                           "HTTP keep-alive, 4000 clients, one server at maxconn 16",
                           srv="maxconn 16", wrk=QUEUE_WRK, env=QUEUE_ENV, sample=True),
    "noqueue-4000": scenario("queue.cfg", 4000,
                             "HTTP keep-alive, 4000 clients, one server without maxconn",
                             wrk=QUEUE_WRK, env=QUEUE_ENV, sample=True),
    "noqueue-16": scenario("queue.cfg", 16,
                           "HTTP keep-alive, 16 clients, one server without maxconn",
                           wrk=QUEUE_WRK, env=QUEUE_ENV, sample=True),
    "queue-vs-noqueue-4000": scenario("queue.cfg", 4000,
                                      "sluice only: 4000 clients, server at maxconn 16 "
                                      "vs without maxconn", wrk=QUEUE_WRK, env=QUEUE_ENV,
                                      sides=QUEUE_AB, sample=True),
    "wakeup-ab": scenario("queue.cfg", 4000,
                          "sluice only: queue-4000 with tune.queue.wakeup instant "
                          "vs shared-runqueue", srv="maxconn 16", wrk=QUEUE_WRK,
                          env=QUEUE_ENV, sides=WAKEUP_AB, sample=True, probe=True),
    # the same on 8 threads: this machine has 2 cores, so 4 threads share
    # each; a shared lock then also suffers from its holder being preempted
    "wakeup-ab-8t": scenario("queue.cfg", 4000,
                             "sluice only: wakeup-ab on 8 threads (over 2 cores)",
                             srv="maxconn 16", wrk=QUEUE_WRK,
                             env=dict(QUEUE_ENV, BENCH_NBTHREAD="8"), sides=WAKEUP_AB,
                             sample=True, probe=True),
    # the TLS issue: termination and origination, side by side
    "https-ka-100": scenario("https.cfg", 100, "HTTPS keep-alive, 100 clients (ECDSA P-256, "
                             "TLS 1.3)", env=tls("www-ecdsa.pem"), scheme="https"),
    "https-conn-ecdsa": scenario("https.cfg", 100, "HTTPS, 100 clients, a full TLS 1.3 handshake "
                                 "per request (ECDSA P-256)", wrk=CLOSE,
                                 env=tls("www-ecdsa.pem"), scheme="https"),
    "https-conn-rsa": scenario("https.cfg", 100, "HTTPS, 100 clients, a full TLS 1.3 handshake "
                               "per request (RSA 2048)", wrk=CLOSE, env=tls("www.pem"),
                               scheme="https"),
    "https-conn-ecdsa-tls12": scenario("https.cfg", 100, "HTTPS, 100 clients, a full TLS 1.2 "
                                       "handshake per request (ECDSA P-256)", wrk=CLOSE,
                                       env=tls("www-ecdsa.pem", "ssl-max-ver TLSv1.2"),
                                       scheme="https"),
    "https-conn-rsa-tls12": scenario("https.cfg", 100, "HTTPS, 100 clients, a full TLS 1.2 "
                                     "handshake per request (RSA 2048)", wrk=CLOSE,
                                     env=tls("www.pem", "ssl-max-ver TLSv1.2"), scheme="https"),
    "https-backend": scenario("https-backend.cfg", 100, "plain HTTP keep-alive clients, TLS to "
                              "the server with http-reuse never: a backend handshake per "
                              "request"),
    "flood": scenario("queue.cfg", 0, "as many keep-alive clients as the descriptor limit "
                      "allows, about half of them queued", wrk=["--timeout", "30s"],
                      env={"BENCH_TIMEOUT_QUEUE": "10s", "BENCH_NBTHREAD": "2"}, kind="flood"),
    # HTTP/2: h2load on the client side, or a `proto h2` server
    "h2c-100x10": scenario("h2.cfg", 100, "HTTP/2 by prior knowledge (h2c, `proto h2`), "
                           "h2load 100 connections x 10 concurrent streams",
                           env=h2env("proto h2"), streams=10),
    "h2-tls-100x10": scenario("h2.cfg", 100, "HTTP/2 over TLS (ALPN h2, ECDSA P-256, "
                              "TLS 1.3), h2load 100 connections x 10 concurrent streams",
                              env=h2env("ssl crt %s alpn h2" %
                                        os.path.join(CERTS, "www-ecdsa.pem")),
                              scheme="https", streams=10),
    "h2-queue-4000": scenario("h2.cfg", 40, "h2c, h2load 40 connections x 100 streams: "
                              "4000 concurrent requests, one server at maxconn 16",
                              srv="maxconn 16", env=h2env("proto h2"), streams=100,
                              sample=True),
    "h1-to-h2-server": scenario("h2.cfg", 100, "HTTP/1.1 keep-alive clients (wrk, 100), "
                                "HTTP/2 toward the server (`proto h2`, nginx h2c)",
                                srv="proto h2", env=h2env(), origin="h2c"),
    # sluice alone can take more: it needs one descriptor per client plus
    # its server connections, where HAProxy's maxconn check reserves two
    "cache-hit-10k": scenario("cache.cfg", 100, "HTTP cache hits of a 10 kB object, 100 "
                              "keep-alive clients (the origin is asked once per round)",
                              path="/static/10k"),
    "cache-hit-64k": scenario("cache.cfg", 100, "HTTP cache hits of a 64 kB object, 100 "
                              "keep-alive clients", path="/static/64k"),
    "flood-sluice": scenario("queue.cfg", 0, "sluice only: as many keep-alive clients as "
                             "sluice's descriptors allow, all but 500 queued",
                             wrk=["--timeout", "30s"],
                             env={"BENCH_TIMEOUT_QUEUE": "10s", "BENCH_NBTHREAD": "2",
                                  # its maxconn needs more than the limit
                                  # by HAProxy's rule (two per connection)
                                  "BENCH_NO_STRICT_LIMITS": "1"},
                             sides=(("sluice", "sluice", {}),), kind="flood", size="sluice"),
}

# two-sided 97.5% quantiles of Student's t for df 1..30; normal beyond
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    if df < 1:
        return float("inf")
    return T975[int(df) - 1] if df <= 30 else 1.96


def welch(a, b):
    """Difference of means a-b and its 95% half-width (Welch)."""
    ma, mb = statistics.mean(a), statistics.mean(b)
    va = statistics.variance(a) if len(a) > 1 else 0.0
    vb = statistics.variance(b) if len(b) > 1 else 0.0
    se2 = va / len(a) + vb / len(b)
    if se2 == 0:
        return ma - mb, 0.0
    num = se2 ** 2
    den = 0.0
    if len(a) > 1:
        den += (va / len(a)) ** 2 / (len(a) - 1)
    if len(b) > 1:
        den += (vb / len(b)) ** 2 / (len(b) - 1)
    df = num / den if den else 1
    return ma - mb, t975(df) * math.sqrt(se2)


def ratio_ci(a, b):
    """Ratio of geometric means a/b and its 95% interval: Welch's interval
    on the logarithms, mapped back (answers "is A at least k times B?")."""
    la = [math.log(max(x, 1e-9)) for x in a]
    lb = [math.log(max(x, 1e-9)) for x in b]
    d, hw = welch(la, lb)
    return math.exp(d), math.exp(d - hw), math.exp(d + hw)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def parse_h2load(out):
    """h2load's summary, in parse_wrk's shape: req/s, no p99 (h2load gives
    none: "mean" holds its mean time per request, in ms), errors, requests
    that succeeded, and the error counts by kind."""
    rps = re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", out)
    req = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                    r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    st = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    mean = re.search(r"time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)", out)
    kinds = {}
    if req:
        kinds.update(failed=int(req.group(5)), errored=int(req.group(6)),
                     timeout=int(req.group(7)))
    if st:
        kinds["non2xx"] = sum(int(st.group(i)) for i in (2, 3, 4))
    lat = None
    if mean:
        lat = float(mean.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[mean.group(2)]
    ok = int(req.group(4)) if req else 0
    # h2load says what ALPN chose (h2) or that it spoke h2c by prior
    # knowledge; anything else is no HTTP/2
    proto = re.search(r"Application protocol: (\S+)", out)
    if proto and proto.group(1) not in ("h2", "h2c"):
        ok = 0
    return {"rps": float(rps.group(1)) if rps and ok else 0.0, "p99": None, "mean": lat,
            "errors": sum(kinds.values()), "requests": ok, "error_kinds": kinds}


def client_summary(out, n=2):
    """The lines of a load generator's output that say why nothing passed."""
    keep = [l.strip() for l in out.splitlines()
            if re.search(r"error|fail|refused|reset|timed out|requests:|status codes|"
                         r"Socket errors|Non-2xx|No protocol|Application protocol", l, re.I)]
    keep = list(dict.fromkeys(keep))
    return " | ".join(keep[:n]) or (out.strip().splitlines() or ["no output"])[-1]


def parse_wrk(out):
    """wrk's summary: req/s, p99 in ms (or None), errors, requests, and the
    error counts by kind."""
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    total = re.search(r"(\d+) requests in", out)
    lat = None
    if p99:
        lat = float(p99.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    kinds = {"non2xx": int(non2xx.group(1)) if non2xx else 0}
    for k, v in zip(("connect", "read", "write", "timeout"), sock.groups() if sock else ()):
        kinds[k] = int(v)
    return {"rps": float(rps.group(1)) if rps else 0.0, "p99": lat,
            "errors": sum(kinds.values()), "requests": int(total.group(1)) if total else 0,
            "error_kinds": kinds}


def sigint_default():
    # a background job of a non-interactive shell inherits SIGINT ignored,
    # and HAProxy keeps it so: stop() could not end it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_proxy(label, program, binary, cfg, env, work):
    log = open(os.path.join(work, label + ".log"), "w")
    flag = "-db" if program == "haproxy" else "-d"
    return subprocess.Popen([binary, flag, "-f", cfg], env=env, stdout=log,
                            stderr=subprocess.STDOUT, preexec_fn=sigint_default)


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def start_origin(work):
    port = free_port()
    with open(os.path.join(HERE, "nginx.conf.in")) as f:
        tls_port = free_port()
        h2c_port = free_port()
        conf = (f.read().replace("@WORK@", work).replace("@ORIGIN_PORT@", str(port))
                .replace("@ORIGIN_TLS_PORT@", str(tls_port))
                .replace("@ORIGIN_H2C_PORT@", str(h2c_port)).replace("@CERTS@", CERTS))
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(conf)
    # the object of the cache scenarios, readable by nginx's workers (which
    # may run as another user than the one who made the work directory)
    os.makedirs(os.path.join(work, "www", "static"), exist_ok=True)
    for name, size in (("10k", 10240), ("64k", 65536)):
        with open(os.path.join(work, "www", "static", name), "wb") as f:
            f.write(bytes(b"0123456789abcdef"[i % 16] for i in range(size)))
    for d in (work, os.path.join(work, "www"), os.path.join(work, "www", "static")):
        os.chmod(d, 0o711 if d == work else 0o755)
    for name in ("10k", "64k"):
        os.chmod(os.path.join(work, "www", "static", name), 0o644)
    nginx = subprocess.Popen(["nginx", "-c", os.path.join(work, "nginx.conf"), "-e",
                              os.path.join(work, "nginx-error.log")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_port(port) or not wait_port(tls_port) or not wait_port(h2c_port):
        stop(nginx)
        sys.exit("nginx did not start")
    os.environ["BENCH_ORIGIN_TLS_PORT"] = str(tls_port)
    os.environ["BENCH_ORIGIN_H2C_PORT"] = str(h2c_port)
    return nginx, port


class SideFailed(Exception):
    """A side cannot run the scenario; the message says why."""


def log_tail(work, label, n=3):
    try:
        with open(os.path.join(work, label + ".log")) as f:
            lines = [l.strip() for l in f if l.strip()]
    except OSError:
        return "no log"
    alerts = [l for l in lines if "ALERT" in l or "rror" in l]
    return " | ".join((alerts or lines)[:n]) or "empty log"


def start_side(a, side, scen, work, origin_port, extra_env=None):
    """Starts one proxy on a fresh port; returns (process, frontend port).
    Raises SideFailed when it does not start (with its first alerts)."""
    label, program, side_env = side
    fe_port = free_port()
    if scen.get("origin") == "h2c":
        origin_port = int(os.environ["BENCH_ORIGIN_H2C_PORT"])
    env = dict(os.environ, BENCH_WORK=work, BENCH_NAME=label,
               BENCH_FE_PORT=str(fe_port), BENCH_ORIGIN_PORT=str(origin_port),
               BENCH_SRV_OPTS=scen["srv"])
    env.update(scen["env"])
    env.update(side_env)
    env.update(extra_env or {})
    binary = a.sluice if program == "sluice" else a.haproxy
    p = run_proxy(label, program, binary, os.path.join(HERE, scen["cfg"]), env, work)
    if not wait_port(fe_port):
        stop(p)
        raise SideFailed("did not start: " + log_tail(work, label))
    return p, fe_port


def wrk_cmd(a, scen, fe_port, conns=None, duration=None):
    if scen["streams"]:
        # h2c by prior knowledge for http://, ALPN h2 for https://
        # over TLS, offer h2 alone: h2load's default ALPN list ends with
        # http/1.1, and a proxy without HTTP/2 would be measured in HTTP/1.1
        return ["h2load", "-t2", "-c%d" % (conns or scen["conns"]),
                "-m%d" % scen["streams"], "-D", "%d" % (duration or a.duration),
                "--npn-list=h2",
                "%s://127.0.0.1:%d%s" % (scen["scheme"], fe_port, scen["path"])]
    return (["wrk"] + scen["wrk"] + ["-t2", "-c%d" % (conns or scen["conns"]),
                                     "-d%ds" % (duration or a.duration), "--latency",
                                     "%s://127.0.0.1:%d%s" % (scen["scheme"], fe_port,
                                                              scen["path"])])


def run_wrk(cmd, duration):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
        return (out or "") + "\n%s: timed out\n" % cmd[0]
    return r.stdout + r.stderr


# ---- the stats socket and the process, seen from outside ----

def cli(work, label, cmd):
    """One command on a proxy's stats socket; its answer ("" if it failed)."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    out = b""
    try:
        s.connect(os.path.join(work, label + ".sock"))
        s.sendall(cmd.encode() + b"\n")
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except OSError:
        pass
    finally:
        s.close()
    return out.decode(errors="replace")


def stat_rows(work, label):
    """`show stat` as {(pxname, svname): {column: value}}."""
    rows, head = {}, None
    for line in cli(work, label, "show stat").splitlines():
        if line.startswith("# "):
            head = line[2:].split(",")
        elif head and line:
            f = line.split(",")
            rows[(f[0], f[1])] = dict(zip(head, f))
    return rows


def stat_int(rows, px, sv, col):
    try:
        return int(rows.get((px, sv), {}).get(col) or 0)
    except ValueError:
        return 0


def server_conns(origin_port):
    """Established connections toward the origin (only one proxy runs)."""
    r = subprocess.run(["ss", "-Htn", "state", "established",
                        "( dport = :%d )" % origin_port], capture_output=True, text=True)
    return len([l for l in r.stdout.splitlines() if l.strip()])


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for l in f:
                if l.startswith("VmRSS:"):
                    return int(l.split()[1])
    except OSError:
        pass
    return 0


def cpu_ms(pid):
    """CPU time (user + system) the process has used so far, in ms."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def open_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


def sample_queue(work, label, origin_port):
    rows = stat_rows(work, label)
    return {"qcur": stat_int(rows, "be", "BACKEND", "qcur"),
            "served": stat_int(rows, "be", "origin", "scur"),
            "srv_conns": server_conns(origin_port)}


# ---- timed rounds ----

def cpu_times():
    """The machine's CPU time so far (clock ticks, all CPUs): total, idle
    (idle + iowait) and stolen (time the hypervisor gave to other guests)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return sum(v), v[3] + v[4], v[7]


def machine_share(t0, t1):
    """Idle and stolen shares (%) of the CPU time between two cpu_times()."""
    tot = t1[0] - t0[0]
    if tot <= 0:
        return float("nan"), float("nan")
    return 100.0 * (t1[1] - t0[1]) / tot, 100.0 * (t1[2] - t0[2]) / tot


def run_round(a, side, scen, work, origin_port):
    """One wrk run against a fresh proxy: wrk's figures, plus the mid-run
    sample and the after-run probe when the scenario asks for them."""
    p, fe_port = start_side(a, side, scen, work, origin_port)
    sample = {}
    timer = None
    if scen["sample"]:
        timer = threading.Timer(a.duration / 2.0, lambda: sample.update(
            sample_queue(work, side[0], origin_port)))
        timer.start()
    cpu0, m0 = cpu_ms(p.pid), cpu_times()
    out = run_wrk(wrk_cmd(a, scen, fe_port), a.duration)
    res = (parse_h2load if scen["streams"] else parse_wrk)(out)
    cpu, m1 = cpu_ms(p.pid) - cpu0, cpu_times()
    if not res["requests"] or not res["rps"]:
        if timer:
            timer.cancel()
        stop(p)
        raise SideFailed("no request succeeded: " + client_summary(out))
    # a virtual machine's CPUs may be taken by the host: a round with much
    # stolen time measures the neighbours, not the proxy
    res["idle_pct"], res["steal_pct"] = machine_share(m0, m1)
    # the proxy's CPU time per request: a cost that the other jobs of the
    # machine disturb much less than they disturb requests/s
    res["cpu_us"] = cpu * 1000.0 / res["requests"] if res["requests"] else float("nan")
    if timer:
        timer.join()
    res["sample"] = sample
    if scen["probe"]:
        res["probe"] = {c: cli(work, side[0], c) for c in ("show activity", "show locks")}
    stop(p)
    return res


def perf_report(data, args, limit):
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--stdio",
                          "-g", "none", "--percent-limit", "1"] + args,
                         capture_output=True, text=True).stdout
    rows = [l for l in rep.splitlines() if l.strip() and not l.startswith("#")]
    for l in rows[:limit]:
        print("    " + re.sub(r"(\s+-)+\s*$", "", l.strip()))


def perf_profile(a, scen, side, work, origin_port):
    """One more run of a side (not counted) under a system-wide perf: prints
    how the CPU time splits between programs (proxy, wrk, nginx, anything
    else running), then the proxy's top symbols."""
    p, fe_port = start_side(a, side, scen, work, origin_port)
    data = os.path.join(work, "perf.data")
    rec = subprocess.Popen(["perf", "record", "-a", "-e", "cpu-clock", "-g", "-o", data,
                            "--", "sleep", str(a.duration)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res = parse_wrk(run_wrk(wrk_cmd(a, scen, fe_port), a.duration))
    rec.wait(a.duration + 30)
    stop(p)
    print("  perf, %s run (%.0f req/s): CPU time by program, all CPUs:" % (side[0], res["rps"]))
    perf_report(data, ["--sort", "comm"], 8)
    print("  perf, %s: self time by symbol, >= 1%% of its own samples:" % side[0])
    perf_report(data, ["--pid", str(p.pid), "--percentage", "relative",
                       "--sort", "dso,symbol"], 30)


ACTIVITY_KEYS = ("queue_wakeup", "loops", "tasks_run", "wake_local", "wake_remote",
                 "wake_elided", "wake_instant", "signals_sent", "signals_rcvd", "sleeps",
                 "budget_left", "wdt_warnings")


def print_probe(label, probe, requests):
    print("  %s, after its last round (%d requests in that round):" % (label, requests))
    for line in probe["show activity"].splitlines():
        if line.split(":")[0] in ACTIVITY_KEYS:
            print("    " + line.rstrip())
    for line in probe["show locks"].splitlines()[:6]:
        print("    " + line.rstrip())


def report_failed(name, scen, res, failed):
    """A scenario that one side (or both) could not run: the other side's
    figures alone, and why."""
    print("%s — %s" % (name, scen["desc"]))
    for label, _, _ in scen["sides"]:
        if label in failed:
            print("  %-15s: FAILED after %d good round(s): %s" %
                  (label, len(res[label]), failed[label]))
            continue
        r = res[label]
        print("  %-15s: median %9.0f req/s, %s, errors %d; rounds: %s" %
              (label, statistics.median(x["rps"] for x in r), latency(r),
               sum(x["errors"] for x in r), " ".join("%.0f" % x["rps"] for x in r)))
        print("  %-15s  proxy CPU per request: median %.1f us" %
              ("", statistics.median(x["cpu_us"] for x in r)))
        samples = [x["sample"] for x in r if x["sample"]]
        if samples:
            print("  %-15s  mid-round (median of rounds): queued %d, served %d, "
                  "server connections %d" % ("", *(statistics.median(s[k] for s in samples)
                                                   for k in ("qcur", "served", "srv_conns"))))
    print("  no comparison: a side failed")


def latency(rounds):
    """p99 from wrk, or h2load's mean time per request (it gives no p99)."""
    if rounds and rounds[0].get("mean") is not None:
        return "mean latency %8.2f ms" % statistics.median(r["mean"] for r in rounds)
    p99 = [r["p99"] if r["p99"] is not None else float("nan") for r in rounds]
    return "p99 %8.2f ms" % statistics.median(p99)


def report(name, scen, res):
    (la, _, _), (lb, _, _) = scen["sides"]
    rps = {l: [r["rps"] for r in res[l]] for l in (la, lb)}
    ma, mb = statistics.median(rps[la]), statistics.median(rps[lb])
    diff, hw = welch(rps[la], rps[lb])
    print("%s — %s" % (name, scen["desc"]))
    for l in (la, lb):
        print("  %-15s: median %9.0f req/s, %s, errors %d; rounds: %s" %
              (l, statistics.median(rps[l]), latency(res[l]),
               sum(r["errors"] for r in res[l]), " ".join("%.0f" % x for x in rps[l])))
        print("  %-15s  proxy CPU per request: median %.1f us; rounds: %s" %
              ("", statistics.median(r["cpu_us"] for r in res[l]),
               " ".join("%.1f" % r["cpu_us"] for r in res[l])))
        print("  %-15s  machine: idle %.0f%%, stolen by the host %.0f%% (medians; stolen per "
              "round: %s)" % ("", statistics.median(r["idle_pct"] for r in res[l]),
                              statistics.median(r["steal_pct"] for r in res[l]),
                              " ".join("%.0f" % r["steal_pct"] for r in res[l])))
        samples = [r["sample"] for r in res[l] if r["sample"]]
        if samples:
            print("  %-15s  mid-round (median of rounds): queued %d, served %d, "
                  "server connections %d" % ("", *(statistics.median(s[k] for s in samples)
                                                   for k in ("qcur", "served", "srv_conns"))))
    print("  ratio %s/%s: %.3f; difference of means: %+.0f req/s "
          "(95%% CI %+.0f .. %+.0f)" % (la, lb, ma / mb if mb else float("nan"),
                                       diff, diff - hw, diff + hw))
    print("  ratio of geometric means: %.3f (95%% CI %.3f .. %.3f)" %
          ratio_ci(rps[la], rps[lb]))
    print("  CPU per request %s/%s: %.3f (95%% CI %.3f .. %.3f)" %
          ((la, lb) + ratio_ci([r["cpu_us"] for r in res[la]], [r["cpu_us"] for r in res[lb]])))
    if scen["probe"]:
        for l in (la, lb):
            print_probe(l, res[l][-1]["probe"], res[l][-1]["requests"])


def run_ab(a, name, scen, work, origin_port):
    sides = scen["sides"]
    res = {s[0]: [] for s in sides}
    failed = {}
    for r in range(a.rounds):
        order = sides if r % 2 == 0 else sides[::-1]
        for side in order:
            if side[0] in failed:
                continue
            try:
                res[side[0]].append(run_round(a, side, scen, work, origin_port))
            except SideFailed as e:
                # the other side still runs its rounds
                failed[side[0]] = str(e)
    if failed:
        report_failed(name, scen, res, failed)
        return res
    report(name, scen, res)
    if a.perf:
        for side in sides:
            perf_profile(a, scen, side, work, origin_port)
    return res


def report_cross(results):
    """sluice with and without the queue, from two scenarios' rounds."""
    if "queue-4000" not in results or "noqueue-4000" not in results:
        return
    q = [r["rps"] for r in results["queue-4000"]["sluice"]]
    n = [r["rps"] for r in results["noqueue-4000"]["sluice"]]
    diff, hw = welch(q, n)
    print("sluice queue-4000 vs noqueue-4000 (rounds of two scenarios, not interleaved):")
    print("  medians %.0f vs %.0f req/s, ratio %.3f; difference of means %+.0f "
          "(95%% CI %+.0f .. %+.0f)" % (statistics.median(q), statistics.median(n),
                                        statistics.median(q) / statistics.median(n),
                                        diff, diff - hw, diff + hw))
    print("  ratio of geometric means %.3f (95%% CI %.3f .. %.3f)\n" % ratio_ci(q, n))


# ---- flood ----

def flood_size(a, scen):
    """(clients, global maxconn, server maxconn) that fit the limit. For
    both proxies: two descriptors per client connection, as HAProxy
    reserves two per connection in its maxconn check. For sluice alone: one
    per client, plus the server connections (in use, and idle ones: at most
    as many again) of a server at maxconn 500."""
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if scen["size"] == "sluice":
        srv = a.flood_maxconn or 500
        clients = a.flood_conns or (limit - FD_RESERVED - 3 * srv) // 100 * 100
        return clients, clients + 10, srv
    gmax = (limit - FD_RESERVED) // 2
    clients = a.flood_conns or (gmax - 50) // 100 * 100
    srv = a.flood_maxconn or clients * 3 // 10
    return clients, max(gmax, clients + 10), srv


class Sampler(threading.Thread):
    """Samples a proxy every half second: RSS, descriptors, queue."""

    def __init__(self, work, label, pid, origin_port):
        super().__init__(daemon=True)
        self.args = (work, label, pid, origin_port)
        self.samples = []
        self.done = threading.Event()

    def run(self):
        work, label, pid, origin_port = self.args
        while not self.done.wait(0.5):
            s = sample_queue(work, label, origin_port)
            s.update(rss=rss_kb(pid), fds=open_fds(pid))
            self.samples.append(s)


def run_flood_side(a, side, scen, work, origin_port):
    clients, gmax, srvmax = flood_size(a, scen)
    label = side[0]
    p, fe_port = start_side(a, side, scen, work, origin_port, {
        "BENCH_MAXCONN": str(gmax), "BENCH_SRV_OPTS": "maxconn %d" % srvmax})
    time.sleep(1)
    out = {"rss_before": rss_kb(p.pid), "pools_before": cli(work, label, "show pools")}
    sampler = Sampler(work, label, p.pid, origin_port)
    sampler.start()
    out["wrk"] = parse_wrk(run_wrk(wrk_cmd(a, scen, fe_port, clients, a.flood_duration),
                                   a.flood_duration))
    sampler.done.set()
    sampler.join()
    out["samples"] = sampler.samples
    out["rss_after"] = []
    for delay in (1, 5, 10):
        time.sleep(delay - (out["rss_after"][-1][0] if out["rss_after"] else 0))
        out["rss_after"].append((delay, rss_kb(p.pid), server_conns(origin_port)))
    out["pools_after"] = cli(work, label, "show pools")
    out["activity"] = cli(work, label, "show activity")
    out["stat"] = stat_rows(work, label)
    stop(p)
    with open(os.path.join(work, label + ".log")) as f:
        out["wdt_lines"] = [l.rstrip() for l in f
                            if re.search(r"watchdog|stuck|about to kill", l, re.I)]
    return out


def pools_summary(text):
    keep = [l.strip() for l in text.splitlines()
            if l.strip().startswith("- Pool") or l.startswith("Total")]
    # HAProxy lists every pool it knows; its total says enough
    return keep if len(keep) <= 8 else [l for l in keep if l.startswith("Total")]


def report_flood_side(label, o):
    w, st, smp = o["wrk"], o["stat"], o["samples"]
    mb = lambda kb: kb / 1024.0
    print("  %s: %.0f req/s, p99 %.2f ms, %d requests; wrk errors: %s" %
          (label, w["rps"], w["p99"] or float("nan"), w["requests"],
           ", ".join("%s %d" % kv for kv in sorted(w["error_kinds"].items()))))
    if smp:
        print("    queued: mean %.0f, max %d; served max %d; server connections max %d; "
              "descriptors max %d (%d samples)" %
              (statistics.mean(s["qcur"] for s in smp), max(s["qcur"] for s in smp),
               max(s["served"] for s in smp), max(s["srv_conns"] for s in smp),
               max(s["fds"] for s in smp), len(smp)))
    print("    show stat: frontend hrsp_5xx %d, ereq %d; backend econ %d (queue timeouts "
          "count here), eresp %d, qmax %d" %
          (stat_int(st, "fe", "FRONTEND", "hrsp_5xx"), stat_int(st, "fe", "FRONTEND", "ereq"),
           stat_int(st, "be", "BACKEND", "econ"), stat_int(st, "be", "BACKEND", "eresp"),
           stat_int(st, "be", "BACKEND", "qmax")))
    peak = max([s["rss"] for s in smp] + [o["rss_before"]])
    print("    RSS: before %.1f MB, peak %.1f MB, after %s" %
          (mb(o["rss_before"]), mb(peak), ", ".join(
              "+%ds %.1f MB (%d server conns)" % (d, mb(r), c) for d, r, c in o["rss_after"])))
    for name, key in (("before", "pools_before"), ("after", "pools_after")):
        for l in pools_summary(o[key]):
            print("    pools %s: %s" % (name, l))
    for l in o["activity"].splitlines():
        if l.startswith(("wdt_warnings", "accepted")):
            print("    " + l.rstrip())
    print("    watchdog lines on stderr: %d%s" % (len(o["wdt_lines"]), "".join(
        "\n      " + l for l in o["wdt_lines"][:10])))


def run_flood(a, name, scen, work, origin_port):
    clients, gmax, srvmax = flood_size(a, scen)
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    print("%s — %s" % (name, scen["desc"]))
    if scen["size"] == "sluice":
        print("  descriptor limit %d per process: sluice needs 1 per client connection + "
              "up to 3 x server maxconn + ~%d, so %d clients (global maxconn %d); wrk needs "
              "about %d of its own" % (limit, FD_RESERVED, clients, gmax, clients))
    else:
        print("  descriptor limit %d per process: the proxy needs 2 per client connection "
              "+ ~%d, so %d clients (global maxconn %d); wrk and nginx each need about %d "
              "of their own" % (limit, FD_RESERVED, clients, gmax, clients))
    print("  server maxconn %d, timeout queue %s, wrk -t2 -c%d -d%ds %s" %
          (srvmax, scen["env"]["BENCH_TIMEOUT_QUEUE"], clients, a.flood_duration,
           " ".join(scen["wrk"])))
    res = {}
    for side in scen["sides"]:
        try:
            res[side[0]] = run_flood_side(a, side, scen, work, origin_port)
        except SideFailed as e:
            print("  %s: FAILED: %s" % (side[0], e))
            continue
        report_flood_side(side[0], res[side[0]])
    return res


# ---- main ----

def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--scenario", action="append", default=[],
                    help="a scenario to run (repeatable)")
    ap.add_argument("--scenarios", default="",
                    help="comma-separated scenarios to run")
    ap.add_argument("--perf", action="store_true",
                    help="profile one extra run per side and scenario with perf")
    ap.add_argument("--flood-conns", type=int, default=0,
                    help="flood clients (default: what the descriptor limit allows)")
    ap.add_argument("--flood-maxconn", type=int, default=0,
                    help="flood server maxconn (default: 30%% of the clients)")
    ap.add_argument("--flood-duration", type=int, default=15)
    ap.add_argument("--sluice", default=os.path.join(TOP, "sluice"))
    ap.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    a = ap.parse_args()
    names = [n for arg in a.scenario + [a.scenarios] for n in arg.split(",") if n]
    for n in names:
        if n not in SCENARIOS:
            ap.error("unknown scenario %r (known: %s)" % (n, ", ".join(SCENARIOS)))
    a.names = names or list(SCENARIOS)
    return a


def raise_fd_limit():
    """ulimit -n min(20000, hard), inherited by every process started."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = FD_LIMIT if hard == resource.RLIM_INFINITY else min(FD_LIMIT, hard)
    if soft != want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def print_machine(a):
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    print("machine: %d cores (%s), %.0f GiB; Linux %s; load average %s" %
          (os.cpu_count(), cpu, mem, os.uname().release,
           " ".join("%.2f" % x for x in os.getloadavg())))
    for name, cmd in (("haproxy", [a.haproxy, "-v"]), ("sluice", [a.sluice, "-v"]),
                      ("nginx", ["nginx", "-v"]), ("wrk", ["wrk", "-v"]),
                      ("h2load", ["h2load", "--version"])):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except OSError:
            print("%-8s not found" % (name + ":"))
            continue
        first = (r.stdout + r.stderr).strip().splitlines()
        print("%-8s %s" % (name + ":", first[0] if first else "?"))
    print("descriptors: ulimit -n %d (hard %d)" % resource.getrlimit(resource.RLIMIT_NOFILE))
    print("rounds: %d x %ds per side, alternating, wrk -t2\n" % (a.rounds, a.duration))


def main():
    a = parse_args()
    tools = ["nginx", "wrk", "ss"] + (["perf"] if a.perf else [])
    if any(SCENARIOS[n]["streams"] for n in a.names):
        tools.append("h2load")
    for tool in tools:
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            sys.exit("missing %s: run 'make bench-deps'" % tool)
    raise_fd_limit()
    work = tempfile.mkdtemp(prefix="sluice-bench-")
    # one build for every round, whatever happens to the tree meanwhile
    shutil.copy2(a.sluice, os.path.join(work, "sluice"))
    a.sluice = os.path.join(work, "sluice")
    nginx, origin_port = start_origin(work)
    print_machine(a)
    results = {}
    try:
        for name in a.names:
            scen = SCENARIOS[name]
            run = run_flood if scen["kind"] == "flood" else run_ab
            results[name] = run(a, name, scen, work, origin_port)
            print()
            sys.stdout.flush()
        report_cross(results)
    finally:
        stop(nginx)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
