#!/bin/sh
# Stress: 10,000 concurrent TCP connections through sluice on two threads,
# each doing 3 verified echo round trips, first straight to the server, then
# with the server limited to `maxconn 200` so that most of them wait in the
# queue. Every byte is checked by the client; the test fails on any lost,
# corrupted or stalled connection, on a crash, or if sluice signalled a
# thread that was not asleep. Loopback only, bounded in time.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/tests/stress/bin
work=$(mktemp -d)
conns=${STRESS_CONNS:-10000}
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT

# sluice holds two descriptors per session; the client and the echo server
# one each, and each process has its own limit. sluice derives maxconn from
# its limit, as HAProxy does (a maxconn needing more descriptors than the
# limit allows would stop it from starting): (limit - 29) / 2 here, more
# than the connections below.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((conns * 2 + 150)) ]; then
	conns=$(( ($(ulimit -n) - 150) / 2 ))
	echo "note: descriptor limit $(ulimit -n): using $conns connections"
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

fail=0
for mode in direct queued; do
	echo_port=$(free_port); fe_port=$(free_port)
	"$bin/tcpload" echo "$echo_port" 120 >"$work/echo.log" 2>&1 &
	echo_pid=$!; pids="$pids $echo_pid"
	srvopt=""
	[ "$mode" = queued ] && srvopt="maxconn 200"
	cat >"$work/cfg" <<CFG
global
    nbthread 2
    stats socket $work/stats.sock level admin
defaults
    mode tcp
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout queue 60s
frontend fe
    bind 127.0.0.1:$fe_port backlog 10000
    default_backend be
backend be
    server echo 127.0.0.1:$echo_port $srvopt
CFG
	rm -f "$work/stats.sock"
	"$top/sluice" -d -f "$work/cfg" >"$work/sluice.log" 2>&1 &
	sl_pid=$!; pids="$pids $sl_pid"
	# listening once its stats socket answers (bounded: a sanitizer build
	# on a loaded machine may take seconds to start)
	i=0
	until echo "show info" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock" 2>/dev/null |
	      grep -q '^CurrConns:'; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "FAIL ($mode): sluice did not start"; cat "$work/sluice.log"; exit 1; }
		sleep 0.1
	done
	if ! "$bin/tcpload" client 127.0.0.1 "$fe_port" "$conns" 3 1024 90; then
		echo "FAIL ($mode): not every connection completed"
		fail=1
	fi
	act=$(echo "show activity" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock")
	echo "$act" | grep -E '^(wake_|signals_|sleeps|accepted|wdt_)'
	wdt=$(echo "$act" | sed -n 's/^wdt_warnings: *\([0-9]*\).*/\1/p')
	[ "${wdt:-1}" -eq 0 ] || { echo "FAIL ($mode): watchdog warnings: $wdt"; fail=1; }
	stats=$(echo "show stat" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock")
	stat=$(echo "$stats" | grep '^be,echo,')
	bstat=$(echo "$stats" | grep '^be,BACKEND,')
	echo "server row: $(echo "$stat" | cut -d, -f1-8)"
	if ! kill -0 "$sl_pid" 2>/dev/null; then
		echo "FAIL ($mode): sluice died"; cat "$work/sluice.log"; fail=1
	fi
	# signals only to sleepers: each eventfd wake-up a thread received
	# follows one of its sleeps (plus the final stop)
	sig=$(echo "$act" | sed -n 's/^signals_rcvd: *\([0-9]*\).*/\1/p')
	slp=$(echo "$act" | sed -n 's/^sleeps: *\([0-9]*\).*/\1/p')
	if [ -n "$sig" ] && [ -n "$slp" ] && [ "$sig" -gt $((slp + 2)) ]; then
		echo "FAIL ($mode): $sig signals for $slp sleeps"; fail=1
	fi
	if [ "$mode" = queued ]; then
		qmax=$(echo "$bstat" | cut -d, -f4)
		smax=$(echo "$stat" | cut -d, -f6)
		echo "queued: qmax=$qmax smax=$smax"
		[ "${smax:-999}" -le 200 ] || { echo "FAIL: server exceeded maxconn ($smax)"; fail=1; }
		[ "${qmax:-0}" -gt 0 ] || { echo "FAIL: nothing was queued"; fail=1; }
		# where threads waited for each other, and what the queue saw
		echo "show locks" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock" | sed '/^$/d'
		echo "show queue" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock" | sed '/^$/d'
		served=$(echo "show queue be" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock" | \
		         awk '$1 == "be/BACKEND" { print $5 }')
		[ "${served:-0}" -gt 0 ] || { echo "FAIL: no queue wait recorded"; fail=1; }
	fi
	# every session's objects went back to their pools. What stays: three
	# listener tasks per thread (resume, stop, admin), the stop watcher, a
	# pool-trim, an idle-trim and two soft-stop tasks (streams, HTTP/2)
	# per thread, thread 1's grace-period task, and the CLI session asking
	# (a task and a buffer): 17 tasks on 2 threads
	# the client is done when it has read its last bytes; sluice may still
	# be tearing sessions down: wait (bounded) until none is left
	i=0
	while [ "$(echo "show info" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock" |
	           sed -n 's/^CurrConns: //p')" != 0 ] && [ $i -lt 100 ]; do
		i=$((i + 1)); sleep 0.1
	done
	pools=$(echo "show pools" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock")
	echo "$pools" | grep -E 'Pool (stream|task|buffer)'
	used() { echo "$pools" | sed -n "s/.*Pool $1 .* \([-0-9]*\) used$/\1/p"; }
	[ "$(used stream)" = 0 ] || { echo "FAIL ($mode): streams still in use"; fail=1; }
	[ "$(used task)" -le 17 ] || { echo "FAIL ($mode): tasks still in use: $(used task)"; fail=1; }
	[ "$(used buffer)" -le 1 ] || { echo "FAIL ($mode): buffers still in use: $(used buffer)"; fail=1; }
	grep -E 'ALERT|WARNING|ERROR' "$work/sluice.log" | head -5
	kill -INT "$sl_pid"; wait "$sl_pid" 2>/dev/null
	kill "$echo_pid"; wait "$echo_pid" 2>/dev/null
	pids=""
done
exit $fail
