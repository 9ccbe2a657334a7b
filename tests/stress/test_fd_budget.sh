#!/bin/sh
# Stress: descriptors at maxconn with idle server connections around.
# sluice runs under `ulimit -n 1000` (so that it stays small and fast) and
# derives maxconn from it. holdload.c then: warms 150 keep-alive clients
# (their server connections stay idle in the pool, pool-max-conn 400 and a
# 60 s purge delay keep them), holds maxconn - 10 requests at the origin
# (httporigin.c answers them seconds later: two descriptors each in
# sluice), and while they are held sends a burst of 100 more requests and
# runs a "good" client (one request per connection). Every request must get
# a 200: no 503 for want of a server socket, and no EMFILE reported by
# sluice. The idle connections must have given their descriptors back to
# the sessions that needed them (closed by their thread, never by another).
# Before the descriptor budget, 150 idle connections on top of maxconn's
# sessions ran sluice out of descriptors: `503 SC` after the retries.
#
# Run twice: with the default pool marks (HAProxy's 20% / 25% of maxsock:
# the pools shrink as the load grows), then with both at 100%, where only
# the hard limit protects the sessions (idle connections closed when a
# connect or accept finds no descriptor, by their own thread or the one
# short of descriptors asking it). Afterwards the descriptor count must be
# the start count plus the pooled connections: nothing leaked.
# Loopback only; bounded in time (about 20 s).
. "$(dirname "$0")/lib.sh"
limit=${STRESS_FDB_LIMIT:-1000}
warm=${STRESS_FDB_WARM:-150}
burst=${STRESS_FDB_BURST:-100}
good_ms=2000
build_helpers httporigin holdload

col() {
	echo "$stats" | awk -F, -v r="$1" -v name="$2" '
		NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		$1 "," $2 == r { print $c }'
}
info() { cli "show info" | sed -n "s/^$1: //p"; }
fd_used() { cli "show activity" | sed -n 's/^fd_used: *\([0-9]*\) .*/\1/p'; }

# $1: name, $2: extra global lines
run() {
	name=$1
	origin_port=$(free_port); fe_port=$(free_port)
	cat >"$work/cfg" <<-CFG
	global
	    nbthread 2
	    stats socket $work/stats.sock level admin
	$2
	defaults
	    mode http
	    timeout connect 5s
	    timeout client 30s
	    timeout server 30s
	    retries 3
	frontend fe
	    bind 127.0.0.1:$fe_port backlog 2048
	    default_backend be
	backend be
	    http-reuse safe
	    server s1 127.0.0.1:$origin_port pool-max-conn 400 pool-purge-delay 60s
	CFG
	"$bin/httporigin" "$origin_port" 60 >"$work/origin.log" 2>&1 &
	origin_pid=$!; pids="$pids $origin_pid"
	rm -f "$work/stats.sock"
	(ulimit -n "$limit" && exec "$sluice" -d -f "$work/cfg") >"$work/sluice.log" 2>&1 &
	sl_pid=$!; pids="$pids $sl_pid"
	i=0
	until cli "show info" 2>/dev/null | grep -q '^CurrConns:'; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "FAIL: sluice did not start"; cat "$work/sluice.log"; exit 1; }
		sleep 0.1
	done
	maxconn=$(info Maxconn)
	start_fds=$(ls "/proc/$sl_pid/fd" | wc -l)
	hold=$((maxconn - 10))
	hold_ms=$((good_ms + 2500 + hold / 10))
	echo "$name: Ulimit-n $(info Ulimit-n), Maxsock $(info Maxsock), Maxconn $maxconn;" \
	     "$warm idle, $hold held, $burst burst"

	# the descriptors sluice holds, sampled while it works
	( peak=0
	  while kill -0 "$sl_pid" 2>/dev/null; do
		n=$(ls "/proc/$sl_pid/fd" 2>/dev/null | wc -l)
		[ "$n" -gt "$peak" ] && peak=$n && echo "$peak" >"$work/peak"
		sleep 0.05
	  done ) &
	sampler=$!; pids="$pids $sampler"

	"$bin/holdload" 127.0.0.1 "$fe_port" "$warm" "$hold" "$burst" "$good_ms" "$hold_ms" 40 \
		>"$work/load.log" 2>&1
	rc=$?
	sed "s/^/  /" "$work/load.log"
	[ $rc -eq 0 ] || bad "$name: not every request got a 200"
	kill -0 "$sl_pid" 2>/dev/null || { bad "$name: sluice died"; tail -n 20 "$work/sluice.log"; }
	wait_no_conn

	stats=$(cli "show stat")
	s5=$(col fe,FRONTEND hrsp_5xx); econ=$(col be,s1 econ)
	idle=$(( $(col be,s1 idle_conn_cur) + $(col be,s1 safe_conn_cur) ))
	act=$(cli "show activity")
	echo "$act" | grep -E '^fd_' | sed "s/^/  /"
	echo "  descriptors: at most $(cat "$work/peak" 2>/dev/null) of $(info Ulimit-n) held;" \
	     "frontend 5xx $s5, server econ $econ, $idle idle connections left"
	[ "${s5:-1}" -eq 0 ] || bad "$name: $s5 responses 5xx"
	[ "${econ:-1}" -eq 0 ] || bad "$name: $econ failed connections to the server"
	if grep -Ei 'too many open files|no descriptor|EMFILE' "$work/sluice.log" | head -3 | grep .; then
		bad "$name: sluice ran out of descriptors (above)"
	fi
	# nothing leaked: sluice holds what it held at start plus the pooled
	# connections, and its count says so (plus the CLI connection asking;
	# sluice closed it before socat returned)
	used=$(fd_used)
	now_fds=$(ls "/proc/$sl_pid/fd" | wc -l)
	[ "$now_fds" -eq $((start_fds + idle)) ] ||
		bad "$name: $now_fds descriptors open, expected $start_fds at start + $idle idle"
	[ "${used:-0}" -eq $((now_fds + 1)) ] ||
		bad "$name: fd_used $used, but $now_fds descriptors open (+1 for the CLI)"
	kill "$sampler" 2>/dev/null
	kill -INT "$sl_pid"; wait "$sl_pid" 2>/dev/null
	if grep -E 'Sanitizer|runtime error' "$work/sluice.log" | head -5 | grep .; then
		bad "$name: sanitizer report (above)"
	fi
	kill -TERM "$origin_pid"; wait "$origin_pid" 2>/dev/null
	pids=""
}

run "default marks" ""
run "marks at 100%" "    tune.pool-low-fd-ratio 100
    tune.pool-high-fd-ratio 100"
# with the marks out of the way, the sessions took the idle connections'
# descriptors at the hard limit, which is the path this run is for
trims=$(echo "$act" | sed -n 's/^fd_trims: *\([0-9]*\) .*/\1/p')
[ "${trims:-0}" -gt 0 ] || bad "marks at 100%: no idle connection was closed for descriptors"

[ $fail -eq 0 ] && echo "PASS: held requests at maxconn, a burst and a good client beside idle server connections: every request answered, no descriptor shortage"
exit $fail
