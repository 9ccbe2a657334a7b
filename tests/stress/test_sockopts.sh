#!/bin/sh
# Socket options of proxies, seen from the kernel: `option clitcpka` with
# clitcpka-idle on the accepted socket and `option srvtcpka` with
# srvtcpka-idle on the server socket (the keepalive timer of
# /proc/net/tcp). Bounded: one connection, a few seconds at most. (Also
# passes with SLUICE=/usr/sbin/haproxy.)
. "$(dirname "$0")/lib.sh"
fe=$(free_port)
srv=$(free_port)
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
backend be
    option srvtcpka
    srvtcpka-idle 1m
    server s1 127.0.0.1:$srv
CFG
start_sluice
python3 - "$fe" "$srv" <<'PY' || fail=1
import socket, sys, time

fe, srv = int(sys.argv[1]), int(sys.argv[2])
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
sys.exit(0 if ok else 1)
PY
[ $fail -eq 0 ] && echo "sockopts: keepalive timers as configured on both sides"
exit $fail
