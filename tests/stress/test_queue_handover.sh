#!/bin/sh
# Stress: the server connection moves with the queue slot. 1000 keep-alive
# clients send 20 pipelined requests each (small bodies both ways, every byte
# checked by httpload.c) through sluice on 2 threads to one server limited to
# `maxconn 16`: nearly every request waits in the queue, and every release
# hands the freed slot, and the idle connection the releasing stream was
# using, to the next waiter, whichever thread owns it. Under `http-reuse
# safe` (the default) the first request of each client opens its own
# connection; every other one should travel on a connection handed over.
# When each thread had to find an idle connection in its own pool instead,
# 1000 clients caused ~4300 connects (one thread's pool ran dry while the
# other's overflowed). Afterwards: all counters agree, no slot, connection
# count or stream is leaked, no watchdog warning. Run twice: with the
# default instant hand-over and with `tune.queue.wakeup shared-runqueue`.
# Loopback only, bounded in
# time; STRESS_HANDOVER_SEED=hex replays a plan.
. "$(dirname "$0")/lib.sh"
conns=${STRESS_HANDOVER_CONNS:-1000}
reqs=${STRESS_HANDOVER_REQS:-20}
maxconn=${STRESS_HANDOVER_MAXCONN:-16}
seed=${STRESS_HANDOVER_SEED:-$(printf '%x' "$(date +%s)")}
total=$((conns * reqs))
build_helpers httporigin httpload

# Starts an origin and sluice: wake-up mode $1, global maxconn $2, one
# server at maxconn $maxconn.
setup() {
	origin_port=$(free_port); fe_port=$(free_port)
	cat >"$work/cfg" <<-CFG
	global
	    nbthread 2
	    maxconn $2
	    stats socket $work/stats.sock level admin
	    tune.queue.wakeup $1
	defaults
	    mode http
	    timeout connect 5s
	    timeout client 30s
	    timeout server 30s
	    timeout queue 30s
	frontend fe
	    bind 127.0.0.1:$fe_port
	    default_backend be
	backend be
	    http-reuse safe
	    server s1 127.0.0.1:$origin_port maxconn $maxconn
	CFG
	"$bin/httporigin" "$origin_port" 60 >"$work/origin.log" 2>&1 &
	origin_pid=$!; pids="$pids $origin_pid"
	start_sluice
}

# Stops both (a sanitizer build reports at exit).
teardown() {
	kill -0 "$sl_pid" 2>/dev/null || bad "$1: sluice died"
	kill -INT "$sl_pid"; wait "$sl_pid" 2>/dev/null
	if grep -E 'Sanitizer|runtime error' "$work/sluice.log" | head -5 | grep .; then
		bad "$1: sanitizer report (above)"
	fi
	kill -TERM "$origin_pid"; wait "$origin_pid" 2>/dev/null
	pids=""
}

# columns of `show stat` by name, from the CSV header
col() {
	echo "$stats" | awk -F, -v r="$1" -v name="$2" '
		NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		$1 "," $2 == r { print $c }'
}
used() { echo "$pools" | sed -n "s/.*Pool $1 .* \([-0-9]*\) used$/\1/p"; }

run_mode() {
	mode=$1
	setup "$mode" 2000
	"$bin/httpload" 127.0.0.1 "$fe_port" "$conns" "$reqs" 1024 40 "$seed" ||
		bad "$mode: not every request came back intact"
	kill -0 "$sl_pid" 2>/dev/null || { bad "$mode: sluice died"; tail -n 20 "$work/sluice.log"; exit 1; }
	wait_no_conn

	stats=$(cli "show stat")
	s_2xx=$(col be,s1 hrsp_2xx); s_smax=$(col be,s1 smax); s_qmax=$(col be,BACKEND qmax)
	s_conn=$(col be,s1 connect); s_reuse=$(col be,s1 reuse); s_used=$(col be,s1 used_conn_cur)
	s_scur=$(col be,s1 scur); s_qcur=$(col be,s1 qcur)
	echo "s1: 2xx=$s_2xx smax=$s_smax backend qmax=$s_qmax connect=$s_conn reuse=$s_reuse" \
	     "used_conn_cur=$s_used scur=$s_scur qcur=$s_qcur"
	[ "${s_2xx:-0}" -eq "$total" ] || bad "$mode: server hrsp_2xx $s_2xx, want $total"
	[ "${s_smax:-99}" -le "$maxconn" ] || bad "$mode: s1 served $s_smax at once (maxconn $maxconn)"
	[ "${s_qmax:-0}" -gt 100 ] || bad "$mode: the queue never filled (qmax $s_qmax)"
	[ $(( ${s_conn:-0} + ${s_reuse:-0} )) -eq "$total" ] ||
		bad "$mode: connects + reuses = $(( ${s_conn:-0} + ${s_reuse:-0} )), want $total"
	# one per client (its first request), plus some opened when the waiter
	# served was a first request (it may not take a used connection under
	# `http-reuse safe`) or the queue was empty for an instant: then the
	# connection goes to its thread's idle pool, which the other thread
	# does not search (no cross-thread take-over yet). On a quiet machine
	# they stayed within 2 x maxconn (the bound CI passed with before);
	# while other jobs loaded the machine, 1050 and 1103 were seen for 1000
	# clients. Without the hand-over it was ~4300.
	[ "${s_conn:-999999}" -le $((conns + conns / 4)) ] ||
		bad "$mode: $s_conn server connections opened for $conns clients: the hand-over lost them"
	[ "${s_used:-1}" -eq 0 ] || bad "$mode: used_conn_cur $s_used after every client left"
	[ "${s_scur:-1}" -eq 0 ] && [ "${s_qcur:-1}" -eq 0 ] || bad "$mode: slots or waiters left: scur $s_scur qcur $s_qcur"

	pools=$(cli "show pools")
	[ "$(used stream)" = 0 ] || bad "$mode: streams still in use: $(used stream)"
	act=$(cli "show activity")
	wdt=$(echo "$act" | sed -n 's/^wdt_warnings: *\([0-9]*\).*/\1/p')
	[ "${wdt:-1}" -eq 0 ] || bad "$mode: watchdog warnings: $wdt"
	echo "$act" | grep -E '^wake_(elided|instant)'
	if grep -Ei 'watchdog|ALERT|WARNING' "$work/sluice.log" | head -5 | grep .; then
		bad "$mode: sluice complained (above)"
	fi
	teardown "$mode"
	grep -q "^origin: $total requests, .* 0 errors" "$work/origin.log" ||
		bad "$mode: the origin did not serve exactly $total requests without error"
	echo "$mode: $s_conn connections for $conns clients"
}

# the default hand-over, then the classic shared run queue (A/B mode): a
# wake-up lost in either hangs clients, which httpload reports
for m in instant shared-runqueue; do
	run_mode $m
done

# Clients that give up: 1500 clients, 200 requests each planned, and the
# client stops after 2 s, closing every connection wherever its stream is
# (queued, just handed a slot and a connection, at the server). Nothing may
# stay counted: connections, slots, waiters, server connections in use,
# streams. (A handed-over connection left registered with the releasing
# stream's poller once made these counters go negative now and then.)
abort_run() {
	setup instant 4000
	"$bin/httpload" 127.0.0.1 "$fe_port" 1500 200 1024 2 "$seed" >"$work/load.log" 2>&1
	grep -q "failed" "$work/load.log" || bad "abort: the clients were meant to give up"
	wait_no_conn
	stats=$(cli "show stat")
	cur=$(cli "show info" | sed -n 's/^CurrConns: //p')
	s_scur=$(col be,s1 scur); s_qcur=$(col be,BACKEND qcur); s_used=$(col be,s1 used_conn_cur)
	s_2xx=$(col be,s1 hrsp_2xx)
	pools=$(cli "show pools")
	echo "abort: CurrConns=$cur s1 2xx=$s_2xx scur=$s_scur backend qcur=$s_qcur" \
	     "used_conn_cur=$s_used streams in use $(used stream)"
	[ "$cur" = 0 ] || bad "abort: CurrConns $cur once every client left"
	[ "${s_scur:-1}" -eq 0 ] && [ "${s_qcur:-1}" -eq 0 ] || bad "abort: slots or waiters left"
	[ "${s_used:-1}" -eq 0 ] || bad "abort: used_conn_cur $s_used"
	[ "$(used stream)" = 0 ] || bad "abort: streams in use $(used stream)"
	teardown abort
}
abort_run

[ $fail -eq 0 ] && echo "PASS: $total queued requests twice (instant, shared-runqueue), each client's connection handed over; 1500 clients giving up left nothing counted"
exit $fail
