#!/usr/bin/env python3
"""sluice benchmarks: sluice and HAProxy side by side on the same config.

One nginx origin (bench/nginx.conf.in); for each scenario, rounds alternate
sluice and HAProxy (the order flips every round), each round starting the
proxy afresh and running wrk against it. For each scenario it prints the
median requests/s and p99 latency of each side, the ratio of medians, and
the difference of mean requests/s with its 95% confidence interval (Welch's
t). Not a test: it asserts nothing; numbers go to doc/benchmarks.md.

Loopback only; every run is bounded by wrk's duration. The sluice binary is
copied once at the start, so that a rebuild during a run cannot mix two
builds. With --perf, one extra sluice run per scenario (not counted) is
sampled with `perf record -e cpu-clock -g` and the top symbols are printed.

    python3 bench/bench.py [--rounds N] [--duration S] [--scenario NAME ...]
                           [--scenarios NAME,NAME] [--perf]
"""
import argparse
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

CLOSE = ["-H", "Connection: close"]

# name -> (config file, server options, wrk connections, extra wrk
# arguments, description)
SCENARIOS = {
    "tcp-ka-100": ("tcp.cfg", "weight 1", 100, [],
                   "TCP mode, 100 keep-alive clients, no queue"),
    "tcp-conn-100": ("tcp.cfg", "weight 1", 100, CLOSE,
                     "TCP mode, 100 clients, a new connection per request"),
    "http-ka-100": ("http.cfg", "weight 1", 100, [],
                    "HTTP mode, 100 keep-alive clients, no queue"),
    "http-close-100": ("http.cfg", "weight 1", 100, CLOSE,
                       "HTTP mode, 100 clients, Connection: close on every request"),
    # diagnosis of http-close-100: the same without idle server connections
    # (with http-reuse safe a first request never takes one anyway)
    "http-close-100-nopool": ("http.cfg", "pool-max-conn 0", 100, CLOSE,
                              "as http-close-100, idle server pool off (pool-max-conn 0)"),
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


def parse_wrk(out):
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    lat = None
    if p99:
        lat = float(p99.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    nerr = int(errs.group(1)) if errs else 0
    if sock:
        nerr += sum(int(x) for x in sock.groups())
    return (float(rps.group(1)) if rps else 0.0), lat, nerr


def sigint_default():
    # a background job of a non-interactive shell inherits SIGINT ignored,
    # and HAProxy keeps it so: stop() could not end it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_proxy(side, binary, cfg, env, work):
    log = open(os.path.join(work, side + ".log"), "w")
    p = subprocess.Popen([binary, "-d" if side == "sluice" else "-db", "-f", cfg],
                         env=env, stdout=log, stderr=subprocess.STDOUT,
                         preexec_fn=sigint_default)
    return p


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
        conf = f.read().replace("@WORK@", work).replace("@ORIGIN_PORT@", str(port))
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(conf)
    nginx = subprocess.Popen(["nginx", "-c", os.path.join(work, "nginx.conf"), "-e",
                              os.path.join(work, "nginx-error.log")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_port(port):
        stop(nginx)
        sys.exit("nginx did not start")
    return nginx, port


def start_side(a, side, scen, work, origin_port):
    """Starts one proxy on a fresh port; returns (process, frontend port)."""
    cfgname, srvopts = scen[0], scen[1]
    fe_port = free_port()
    env = dict(os.environ, BENCH_WORK=work, BENCH_NAME=side,
               BENCH_FE_PORT=str(fe_port), BENCH_ORIGIN_PORT=str(origin_port),
               BENCH_SRV_OPTS=srvopts)
    binary = a.sluice if side == "sluice" else a.haproxy
    p = run_proxy(side, binary, os.path.join(HERE, cfgname), env, work)
    if not wait_port(fe_port):
        stop(p)
        sys.exit("%s did not start (see %s/%s.log)" % (side, work, side))
    return p, fe_port


def wrk_cmd(a, scen, fe_port):
    conns, extra = scen[2], scen[3]
    return (["wrk"] + extra + ["-t2", "-c%d" % conns, "-d%ds" % a.duration, "--latency",
                               "http://127.0.0.1:%d/" % fe_port])


def run_round(a, side, scen, work, origin_port):
    """One wrk run against a fresh proxy: (req/s, p99 ms or None, errors)."""
    p, fe_port = start_side(a, side, scen, work, origin_port)
    out = subprocess.run(wrk_cmd(a, scen, fe_port), capture_output=True, text=True,
                         timeout=a.duration + 30).stdout
    stop(p)
    return parse_wrk(out)


def perf_profile(a, scen, work, origin_port):
    """One more sluice run (not counted) under perf; prints the top symbols."""
    p, fe_port = start_side(a, "sluice", scen, work, origin_port)
    data = os.path.join(work, "perf.data")
    rec = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-g", "-o", data,
                            "-p", str(p.pid), "--", "sleep", str(a.duration)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(wrk_cmd(a, scen, fe_port), capture_output=True, text=True,
                   timeout=a.duration + 30)
    rec.wait(a.duration + 30)
    stop(p)
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort",
                          "symbol", "--stdio", "-g", "none", "--percent-limit", "1"],
                         capture_output=True, text=True).stdout
    rows = [l for l in rep.splitlines() if l.strip() and not l.startswith("#")]
    print("  perf (sluice, self time, >= 1%):")
    for l in rows[:20]:
        print("    " + re.sub(r"(\s+-)+\s*$", "", l.strip()))


def report(name, desc, res, lat, errors):
    ms, mh = statistics.median(res["sluice"]), statistics.median(res["haproxy"])
    diff, hw = welch(res["sluice"], res["haproxy"])
    print("%s — %s" % (name, desc))
    for side in ("sluice", "haproxy"):
        print("  %-7s: median %9.0f req/s, p99 %7.2f ms, errors %d; rounds: %s" %
              (side, statistics.median(res[side]), statistics.median(lat[side]),
               errors[side], " ".join("%.0f" % x for x in res[side])))
    print("  ratio sluice/haproxy: %.3f; difference of means: %+.0f req/s "
          "(95%% CI %+.0f .. %+.0f)" % (ms / mh if mh else float("nan"),
                                       diff, diff - hw, diff + hw))


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--scenario", action="append", default=[],
                    help="a scenario to run (repeatable)")
    ap.add_argument("--scenarios", default="",
                    help="comma-separated scenarios to run")
    ap.add_argument("--perf", action="store_true",
                    help="profile one extra sluice run per scenario with perf")
    ap.add_argument("--sluice", default=os.path.join(TOP, "sluice"))
    ap.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    a = ap.parse_args()
    names = [n for arg in a.scenario + [a.scenarios] for n in arg.split(",") if n]
    for n in names:
        if n not in SCENARIOS:
            ap.error("unknown scenario %r (known: %s)" % (n, ", ".join(SCENARIOS)))
    a.names = names or list(SCENARIOS)
    return a


def print_machine(a):
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    print("machine: %d cores (%s), %.0f GiB; Linux %s" %
          (os.cpu_count(), cpu, mem, os.uname().release))
    for name, cmd in (("haproxy", [a.haproxy, "-v"]), ("sluice", [a.sluice, "-v"]),
                      ("nginx", ["nginx", "-v"]), ("wrk", ["wrk", "-v"])):
        r = subprocess.run(cmd, capture_output=True, text=True)
        first = (r.stdout + r.stderr).strip().splitlines()
        print("%-8s %s" % (name + ":", first[0] if first else "?"))
    print("rounds: %d x %ds per side, alternating, wrk -t2\n" % (a.rounds, a.duration))


def main():
    a = parse_args()
    for tool in ("nginx", "wrk") + (("perf",) if a.perf else ()):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            sys.exit("missing %s: run 'make bench-deps'" % tool)
    work = tempfile.mkdtemp(prefix="sluice-bench-")
    # one build for every round, whatever happens to the tree meanwhile
    shutil.copy2(a.sluice, os.path.join(work, "sluice"))
    a.sluice = os.path.join(work, "sluice")
    nginx, origin_port = start_origin(work)
    print_machine(a)
    try:
        for name in a.names:
            scen = SCENARIOS[name]
            res = {"sluice": [], "haproxy": []}
            lat = {"sluice": [], "haproxy": []}
            errors = {"sluice": 0, "haproxy": 0}
            for r in range(a.rounds):
                order = ["sluice", "haproxy"] if r % 2 == 0 else ["haproxy", "sluice"]
                for side in order:
                    rps, p99, nerr = run_round(a, side, scen, work, origin_port)
                    res[side].append(rps)
                    lat[side].append(p99 if p99 is not None else float("nan"))
                    errors[side] += nerr
            report(name, scen[4], res, lat, errors)
            if a.perf:
                perf_profile(a, scen, work, origin_port)
            print()
            sys.stdout.flush()
    finally:
        stop(nginx)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
