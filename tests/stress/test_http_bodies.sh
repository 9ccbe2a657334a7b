#!/bin/sh
# Stress: HTTP mode with large bodies, keep-alive and pipelining. 50 client
# connections each send 20 pipelined requests through sluice (2 threads) to
# an origin (httporigin.c) by way of a backend of two servers, one with
# `maxconn 4`, the other `maxconn 16`: with 50 clients both fill up and
# requests wait in the backend queue (round robin skips a full server while
# another has room, so one limit alone would never queue). Bodies go both ways, 0 to 4 MB,
# Content-Length or chunked (random chunk sizes, extensions, trailers), a few
# behind `Expect: 100-continue`. The client (httpload.c) checks every byte
# of every response and what the origin saw of every request. Afterwards the
# stats socket must agree on the counts, no stream or transaction may be
# left in its pool, no watchdog warning, sluice alive. Loopback only,
# bounded in time; the plan's seed is printed so that a failure replays
# (STRESS_HTTP_SEED=hex).
. "$(dirname "$0")/lib.sh"
conns=${STRESS_HTTP_CONNS:-50}
reqs=${STRESS_HTTP_REQS:-20}
maxbody=${STRESS_HTTP_MAX_BODY:-4194304}
seed=${STRESS_HTTP_SEED:-$(printf '%x' "$(date +%s)")}
total=$((conns * reqs))
build_helpers httporigin httpload

origin_port=$(free_port); fe_port=$(free_port)
cat >"$work/cfg" <<CFG
global
    nbthread 2
    maxconn 2000
    stats socket $work/stats.sock level admin
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
    balance roundrobin
    server s1 127.0.0.1:$origin_port maxconn 16
    server s2 127.0.0.1:$origin_port maxconn 4
CFG
if ! "$sluice" -c -f "$work/cfg" >"$work/check.log" 2>&1; then
	if grep -q "mode 'http' is not supported" "$work/check.log"; then
		echo "SKIP: this sluice has no HTTP mode yet"; exit 0
	fi
	cat "$work/check.log"; echo "FAIL: configuration refused"; exit 1
fi

"$bin/httporigin" "$origin_port" 90 >"$work/origin.log" 2>&1 &
origin_pid=$!; pids="$pids $origin_pid"
start_sluice

"$bin/httpload" 127.0.0.1 "$fe_port" "$conns" "$reqs" "$maxbody" 45 "$seed" ||
	bad "not every request came back intact"

kill -0 "$sl_pid" 2>/dev/null || { bad "sluice died"; tail -n 20 "$work/sluice.log"; exit 1; }

# The client has its last byte; sluice may still be ending the streams (the
# counters move then): wait, bounded, until no connection is left.
wait_no_conn

# counters: every request counted once, all 2xx, no error column moved
stats=$(cli "show stat")
col() { echo "$stats" | awk -F, -v r="$1" -v c="$2" '$1 "," $2 == r { print $c }'; }
fe_req=$(col fe,FRONTEND 49); fe_2xx=$(col fe,FRONTEND 41); fe_ereq=$(col fe,FRONTEND 13)
be_2xx=$(col be,BACKEND 41); be_econ=$(col be,BACKEND 14); be_eresp=$(col be,BACKEND 15)
s1_2xx=$(col be,s1 41); s2_2xx=$(col be,s2 41); s1_smax=$(col be,s1 6)
s2_smax=$(col be,s2 6); s2_qmax=$(col be,s2 4); be_qmax=$(col be,BACKEND 4)
echo "frontend: req_tot=$fe_req 2xx=$fe_2xx ereq=$fe_ereq; backend: 2xx=$be_2xx" \
     "econ=$be_econ eresp=$be_eresp qmax=$be_qmax; s1 2xx=$s1_2xx; s2 2xx=$s2_2xx" \
     "smax=$s2_smax qmax=$s2_qmax"
[ "${fe_req:-0}" -eq "$total" ] || bad "frontend req_tot $fe_req, want $total"
[ "${fe_2xx:-0}" -eq "$total" ] || bad "frontend hrsp_2xx $fe_2xx, want $total"
[ "${be_2xx:-0}" -eq "$total" ] || bad "backend hrsp_2xx $be_2xx, want $total"
[ $(( ${s1_2xx:-0} + ${s2_2xx:-0} )) -eq "$total" ] || bad "server 2xx do not add up to $total"
[ "${fe_ereq:-1}" -eq 0 ] && [ "${be_econ:-1}" -eq 0 ] && [ "${be_eresp:-1}" -eq 0 ] ||
	bad "error counters moved"
[ "${s2_smax:-99}" -le 4 ] || bad "s2 served $s2_smax at once (maxconn 4)"
[ "${s1_smax:-99}" -le 16 ] || bad "s1 served $s1_smax at once (maxconn 16)"
[ $(( ${s2_qmax:-0} + ${be_qmax:-0} )) -gt 0 ] || bad "nothing was queued"
cumreq=$(cli "show info" | sed -n 's/^CumReq: //p')
echo "show info: CumReq=$cumreq"
[ "${cumreq:-0}" -ge "$total" ] || bad "CumReq $cumreq, want at least $total"

act=$(cli "show activity")
wdt=$(echo "$act" | sed -n 's/^wdt_warnings: *\([0-9]*\).*/\1/p')
[ "${wdt:-1}" -eq 0 ] || bad "watchdog warnings: $wdt"

# What stays in the pools: the listener (resume, stop, admin), pool-trim,
# idle-trim and the two soft-stop tasks (streams, HTTP/2) (16 on 2
# threads), the grace-period task (thread 1), the CLI
# session asking (a task and a buffer), each thread's spare buffer (head
# rewriting), and the idle server connections kept for reuse (a task each,
# no buffer).
# (srv_icur, column 89: idle_conn_cur + safe_conn_cur, pooled connections
# that carried one request and those that carried more)
idle=$(( $(col be,s1 89) + $(col be,s2 89) ))
echo "idle server connections: $idle; server connects $(( $(col be,s1 85) + $(col be,s2 85) ))," \
     "reuses $(( $(col be,s1 86) + $(col be,s2 86) ))"
pools=$(cli "show pools")
echo "$pools" | grep -E 'Pool (stream|http_txn|task|buffer) '
used() { echo "$pools" | sed -n "s/.*Pool $1 .* \([-0-9]*\) used$/\1/p"; }
[ "$(used stream)" = 0 ] || bad "streams still in use: $(used stream)"
[ "$(used http_txn)" = 0 ] || bad "HTTP transactions still in use: $(used http_txn)"
[ "$(used task)" -le $((17 + idle)) ] || bad "tasks still in use: $(used task)"
[ "$(used buffer)" -le 3 ] || bad "buffers still in use: $(used buffer)"

if grep -Ei 'watchdog|ALERT|WARNING' "$work/sluice.log" | head -5 | grep .; then
	bad "sluice complained (above)"
fi
kill -0 "$sl_pid" 2>/dev/null || bad "sluice died"
kill -INT "$sl_pid"; wait "$sl_pid" 2>/dev/null
# a sanitizer build (make SAN=1) reports at exit
if grep -E 'Sanitizer|runtime error' "$work/sluice.log" | head -5 | grep .; then
	bad "sanitizer report (above)"
fi
kill -TERM "$origin_pid"; wait "$origin_pid" 2>/dev/null
cat "$work/origin.log" | grep -v listening
grep -q "^origin: $total requests, .* 0 errors" "$work/origin.log" ||
	bad "the origin did not serve exactly $total requests without error"
pids=""
[ $fail -eq 0 ] && echo "PASS: $total HTTP requests, every byte verified"
exit $fail
