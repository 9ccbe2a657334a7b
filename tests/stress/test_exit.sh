#!/bin/sh
# Exits: after HTTP traffic on both threads (every thread then holds buffers
# of its own: pool caches, a spare buffer), SIGUSR1 must end sluice with
# status 0 once the sessions are gone, and SIGINT must make it die from
# SIGINT. In a sanitizer build (make SAN=1) both exits run LeakSanitizer:
# memory a thread kept and nothing frees when it ends is a leak, and the
# process then exits with LeakSanitizer's code (see main.c) instead.
. "$(dirname "$0")/lib.sh"
fe_port=$(free_port)
cat >"$work/cfg" <<CFG
global
    nbthread 2
    stats socket $work/stats.sock level admin
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:$fe_port
    http-request return status 200 content-type text/plain string ok
CFG

# Sends requests on new connections until both threads accepted some
# (bounded: the kernel spreads connections over the threads' sockets).
traffic() {
	python3 - "$fe_port" <<'PY' || bad "traffic: $1"
import socket, sys
for i in range(200):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n" * 2)
    got = b""
    while got.count(b"HTTP/1.1 200") < 2:
        d = s.recv(4096)
        if not d:
            sys.exit("connection closed early")
        got += d
    s.close()
PY
	accepted=$(cli "show activity" | sed -n 's/^accepted: *[0-9]* \[ \(.*\) \]$/\1/p')
	case "$accepted" in
	"0 "*|*" 0"|"") bad "$1: not every thread accepted ($accepted)";;
	esac
}

# Waits (bounded) for the end of $sl_pid; sets $status.
wait_exit() {
	i=0
	while kill -0 "$sl_pid" 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
	if kill -0 "$sl_pid" 2>/dev/null; then
		bad "$1: still running 10 s after the signal"
		kill -KILL "$sl_pid"
	fi
	wait "$sl_pid"
	status=$?
}

start_sluice
traffic usr1
kill -USR1 "$sl_pid"
wait_exit usr1
[ "$status" -eq 0 ] || { bad "SIGUSR1: exit status $status, wanted 0"; cat "$work/sluice.log"; }

start_sluice
traffic int
kill -INT "$sl_pid"
wait_exit int
[ "$status" -eq 130 ] || { bad "SIGINT: exit status $status, wanted 130 (death by SIGINT)"; cat "$work/sluice.log"; }

[ $fail -eq 0 ] && echo "exit: SIGUSR1 and SIGINT after traffic on 2 threads: clean"
exit $fail
