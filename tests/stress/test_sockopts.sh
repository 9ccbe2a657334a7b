#!/bin/sh
# Socket options of proxies and bind lines, seen from the kernel: `option
# clitcpka` with clitcpka-idle on the accepted socket and `option
# srvtcpka` with srvtcpka-idle on the server socket (the keepalive timer
# of /proc/net/tcp); a bind line's `mss` (the MSS the client learns) and
# `defer-accept` (a silent connection is not accepted: not counted in
# CurrConns until it speaks). Bounded: a few connections, seconds at most.
# (Also passes with SLUICE=/usr/sbin/haproxy.)
. "$(dirname "$0")/lib.sh"
fe=$(free_port)
srv=$(free_port)
fe2=$(free_port)
cat >"$work/cfg" <<CFG
global
    stats socket $work/stats.sock level admin
defaults
    mode tcp
    timeout client 10s
    timeout server 10s
    timeout connect 1s
frontend fe
    bind 127.0.0.1:$fe
    option clitcpka
    clitcpka-idle 7s
    clitcpka-intvl 3s
    clitcpka-cnt 4
    default_backend be
frontend fe2
    bind 127.0.0.1:$fe2 mss 1200 defer-accept
    default_backend be
backend be
    option srvtcpka
    srvtcpka-idle 1m
    server s1 127.0.0.1:$srv
CFG
start_sluice
python3 - "$fe" "$srv" "$fe2" "$work/stats.sock" <<'PY' || fail=1
import socket, sys, time

fe, srv, fe2, sock = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def curr_conns():
    u = socket.socket(socket.AF_UNIX)
    u.connect(sock)
    u.sendall(b"show info\n")
    data = b""
    while True:
        b = u.recv(4096)
        if not b:
            break
        data += b
    for line in data.decode().splitlines():
        if line.startswith("CurrConns:"):
            return int(line.split()[1])
    return -1

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", srv))
ls.listen(1)
ls.settimeout(5)
c = socket.create_connection(("127.0.0.1", fe), timeout=5)
c.sendall(b"x")
s, _ = ls.accept()
s.settimeout(5)
assert s.recv(1) == b"x"
cport = c.getsockname()[1]
sport = s.getpeername()[1]           # sluice's side of the server connection


def timer(local, remote):
    """(timer kind, seconds left) of the socket local->remote, from
    /proc/net/tcp (kind 2 is keepalive; 'when' is in USER_HZ ticks)."""
    for line in open("/proc/net/tcp").readlines()[1:]:
        f = line.split()
        lp = int(f[1].split(":")[1], 16)
        rp = int(f[2].split(":")[1], 16)
        if lp == local and rp == remote:
            kind, when = f[5].split(":")
            return int(kind, 16), int(when, 16) / 100.0
    return None


ok = True
t = timer(fe, cport)
if not t or t[0] != 2 or not 4 <= t[1] <= 7.5:
    print("FAIL: client side keepalive timer: %r (want keepalive, ~7 s)" % (t,))
    ok = False
t = timer(sport, srv)
if not t or t[0] != 2 or not 50 <= t[1] <= 60.5:
    print("FAIL: server side keepalive timer: %r (want keepalive, ~60 s)" % (t,))
    ok = False
c.close()
s.close()

# mss: what the client learns from the SYN-ACK (minus options, at most)
d = socket.create_connection(("127.0.0.1", fe2), timeout=5)
mss = d.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
if not 1100 <= mss <= 1200:
    print("FAIL: bind mss 1200: the client's MSS is %d" % mss)
    ok = False
# defer-accept: connected for the client, not yet accepted by the proxy
time.sleep(0.3)
n = curr_conns()
if n != 0:
    print("FAIL: defer-accept: %d connections accepted before any byte" % n)
    ok = False
d.close()
sys.exit(0 if ok else 1)
PY
[ $fail -eq 0 ] && echo "sockopts: keepalive timers on both sides, bind mss and defer-accept as configured"
exit $fail
