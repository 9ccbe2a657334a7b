#!/bin/sh
# Stress: a per-source rate limit under a flood of sources, on two threads.
#
# Phase 1: 20,000 connections from 2,000 loopback addresses (127.0.x.y),
# 10 per source, each with one request, through
#     stick-table type ip size 100k expire 60s store http_req_rate(60s)
#     http-request track-sc0 src
#     http-request deny deny_status 429 if { sc_http_req_rate(0) gt 5 }
# Every request of a source counts before the rule reads it, so exactly 5
# per source pass and 5 are denied, whatever the order: 10,000 of each.
#
# Phase 2: a table of 500 entries for 2,000 sources (each with one
# keep-alive connection of 10 requests, tracked by tcp-request connection
# so that its entry is referenced, thus never evicted, while it is used):
# the table stays at 500 entries, evicting idle ones, and the limit is
# still exact for every source.
#
# Both: zero watchdog warning, sluice alive. Loopback only, bounded in
# time (each load run gives up after 120 s).
. "$(dirname "$0")/lib.sh"

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
fe_port=$(free_port); fe2_port=$(free_port)
cat >"$work/cfg" <<CFG
global
    nbthread 2
    stats socket $work/stats.sock level admin
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:$fe_port backlog 4096
    stick-table type ip size 100k expire 60s store http_req_rate(60s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 5 }
    http-request return status 200
frontend small
    bind 127.0.0.1:$fe2_port backlog 4096
    stick-table type ip size 500 expire 60s store http_req_rate(60s),conn_cur
    tcp-request connection track-sc0 src
    http-request return status 429 if { sc_http_req_rate(0) gt 5 }
    http-request return status 200
CFG
start_sluice

expect_counts() {
	# $1: label, $2: output of stkload.py
	echo "$1: $(echo "$2" | tr '\n' ' ')"
	echo "$2" | grep -qx "status 200 10000" || bad "$1: not exactly 10000 requests passed"
	echo "$2" | grep -qx "status 429 10000" || bad "$1: not exactly 10000 requests denied"
	echo "$2" | grep -qx "errors 0" || bad "$1: connection errors"
}

out=$(python3 "$src/stkload.py" close "$fe_port" 2000 10 200 120) || bad "phase 1 timed out"
expect_counts "phase 1 (20000 connections, 2000 sources)" "$out"
hdr=$(cli "show table fe" | sed -n 1p)
echo "$hdr"
[ "$hdr" = "# table: fe, type: ip, size:102400, used:2000" ] || bad "phase 1: table should hold 2000 entries"

out=$(python3 "$src/stkload.py" keepalive "$fe2_port" 2000 10 100 120) || bad "phase 2 timed out"
expect_counts "phase 2 (table of 500 for 2000 sources)" "$out"
wait_no_conn
hdr=$(cli "show table small" | sed -n 1p)
echo "$hdr"
[ "$hdr" = "# table: small, type: ip, size:500, used:500" ] || bad "phase 2: table should be full at 500 entries"
# no entry is referenced any more: every connection left
cli "show table small data.conn_cur gt 0" | grep -q 'key=' && bad "phase 2: entries still in use"

act=$(cli "show activity")
wdt=$(echo "$act" | sed -n 's/^wdt_warnings: *\([0-9]*\).*/\1/p')
echo "watchdog warnings: ${wdt:-?}"
[ "${wdt:-1}" -eq 0 ] || bad "watchdog warnings: $wdt"
cli "show locks" | grep -E '^ *(kind|stktable)' || true
kill -0 "$sl_pid" 2>/dev/null || { bad "sluice died"; cat "$work/sluice.log"; }
[ $fail = 0 ] && echo "PASS: stick-table flood"
exit $fail
