#!/bin/sh
# Benchmark (not a test, not run by `make test`): descriptors at maxconn,
# sluice and HAProxy 2.6 side by side on the same configuration, the load of
# the issue that brought the descriptor budget. Under the descriptor limit
# of this shell (20,000 on the machines it was written for; neither proxy is
# given maxconn, both derive it), holdload.c:
#   - measures a good client alone (one request per new connection, one at
#     a time) for GOOD_MS,
#   - warms WARM keep-alive clients, which close: their server connections
#     stay idle in the pools (pool-max-conn 400, 60 s purge),
#   - holds HOLD requests at the origin (httporigin.c answers them later),
#   - then sends BURST more requests at once while the good client runs
#     again for GOOD_MS,
# and counts the answers by status. Rounds alternate the proxies. Reported
# per round: the good client's p50/p99 alone and under the held load (and
# their ratio), 503s and other failures, and the most descriptors the proxy
# held (sampled from /proc every 200 ms).
#
#   sh bench/fd_budget.sh                  # sluice of this tree vs HAProxy
#   FDB_PROXIES="old:/path/to/sluice haproxy:/usr/sbin/haproxy" sh bench/fd_budget.sh
#   FDB_ROUNDS=3 FDB_HOLD=9900 FDB_BURST=200 FDB_WARM=100 FDB_GOOD_MS=3000
#
# Loopback only; each round is bounded (holdload gives up after 90 s).
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/stress/lib.sh"
rounds=${FDB_ROUNDS:-3}
hold=${FDB_HOLD:-9900}
burst=${FDB_BURST:-200}
warm=${FDB_WARM:-100}
good_ms=${FDB_GOOD_MS:-3000}
proxies=${FDB_PROXIES:-"sluice:$sluice haproxy:/usr/sbin/haproxy"}
hold_ms=$((good_ms + 4000 + hold / 10))
build_helpers httporigin holdload
ulimit -n "$(ulimit -Hn)"
echo "descriptor limit $(ulimit -n); $warm idle, $hold held for $hold_ms ms, burst $burst," \
     "good client ${good_ms} ms alone then under load; $rounds rounds"

one_round() {
	label=$1 prog=$2
	origin_port=$(free_port); fe_port=$(free_port)
	cat >"$work/$label.cfg" <<-CFG
	global
	    nbthread 2
	    stats socket $work/$label.sock level admin
	defaults
	    mode http
	    timeout connect 5s
	    timeout client 60s
	    timeout server 60s
	    retries 3
	frontend fe
	    bind 127.0.0.1:$fe_port backlog 16384
	    default_backend be
	backend be
	    http-reuse safe
	    server s1 127.0.0.1:$origin_port pool-max-conn 400 pool-purge-delay 60s
	CFG
	"$bin/httporigin" "$origin_port" 120 >"$work/origin.log" 2>&1 &
	origin_pid=$!
	flag=-d
	case "$prog" in *haproxy*) flag=-db ;; esac
	rm -f "$work/$label.sock"
	"$prog" $flag -f "$work/$label.cfg" >"$work/$label.log" 2>&1 &
	px_pid=$!
	i=0
	until echo "show info" | socat -t 2 - "UNIX-CONNECT:$work/$label.sock" 2>/dev/null |
	      grep -q '^CurrConns:'; do
		i=$((i + 1)); [ $i -lt 100 ] || { echo "$label did not start"; cat "$work/$label.log"; exit 1; }
		sleep 0.1
	done
	info=$(echo "show info" | socat -t 2 - "UNIX-CONNECT:$work/$label.sock")
	limits=$(echo "$info" | grep -E '^(Ulimit-n|Maxsock|Maxconn):' | tr '\n' ' ')
	( peak=0
	  while kill -0 "$px_pid" 2>/dev/null; do
		n=$(ls "/proc/$px_pid/fd" 2>/dev/null | wc -l)
		[ "$n" -gt "$peak" ] && peak=$n && echo "$peak" >"$work/peak"
		sleep 0.2
	  done ) &
	sampler=$!
	"$bin/holdload" 127.0.0.1 "$fe_port" "$warm" "$hold" "$burst" "$good_ms" "$hold_ms" 90 \
		>"$work/load.log" 2>&1
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
	# TERM: a background job of a script starts with SIGINT ignored, and
	# HAProxy keeps it so
	kill -TERM "$px_pid"; wait "$px_pid" 2>/dev/null
	kill -TERM "$origin_pid"; wait "$origin_pid" 2>/dev/null
	# one line: good p50/p99 alone and loaded, failures, peak descriptors
	set -- $(sed -n 's/^summary: //p' "$work/load.log")
	ratio=$(echo "$2 $4" | awk '{ printf "%.2f", ($1 > 0 ? $2 / $1 : 0) }')
	printf "%-8s %s| good p50/p99 alone %s/%s ms, loaded %s/%s ms (max %s), p99 x%s" \
	       "$label" "$limits" "$1" "$2" "$3" "$4" "$5" "$ratio"
	printf " | 503: %s, other failures: %s | fds peak %s\n" "$6" "$7" "$(cat "$work/peak")"
	grep '^slow' "$work/load.log" | sed 's/^/           /'
	rm -f "$work/peak"
}

r=1
while [ $r -le "$rounds" ]; do
	# alternate the order every round
	if [ $((r % 2)) -eq 1 ]; then order=$proxies; else order=$(echo "$proxies" | tr ' ' '\n' | tac | tr '\n' ' '); fi
	for p in $order; do
		one_round "${p%%:*}" "${p#*:}"
	done
	r=$((r + 1))
done
