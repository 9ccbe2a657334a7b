#!/bin/sh
# Stress: what an idle keep-alive connection costs, and memory coming back.
# 2,000 HTTP clients send one request each through sluice (2 threads) to an
# origin (httporigin.c) and stay connected, idle, waiting for their next
# request. sluice's resident memory may grow by less than IDLE_MAX_BYTES
# per idle connection (no buffer, no transaction is held while waiting);
# every connection must then still serve a second request; once they all
# closed, the resident memory must come back near its start (the pools and
# the allocator hand it back after a peak). Counts are bounded, loopback
# only; waits are bounded polls, nothing asserts a duration.
. "$(dirname "$0")/lib.sh"
conns=${STRESS_IDLE_CONNS:-2000}
idle_max=${IDLE_MAX_BYTES:-8192}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$sl_pid/status"; }

# a sanitizer build (make SAN=1) has no pool caches and its own allocator:
# every check runs but the memory bounds
memcheck=1
if [ "${SAN:-0}" = 1 ] || ldd "$sluice" 2>/dev/null | grep -q libasan; then
	memcheck=0
	echo "note: sanitizer build: memory bounds not checked"
fi

# sluice holds a client and a (kept) server descriptor per connection
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((conns * 2 + 200)) ]; then
	conns=$(( ($(ulimit -n) - 200) / 2 ))
	echo "note: descriptor limit $(ulimit -n): using $conns connections"
fi

build_helpers httporigin

origin_port=$(free_port); fe_port=$(free_port)
cat >"$work/cfg" <<CFG
global
    nbthread 2
    maxconn $((conns + 100))
    stats socket $work/stats.sock level admin
defaults
    mode http
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    timeout http-keep-alive 120s
frontend fe
    bind 127.0.0.1:$fe_port backlog 4096
    default_backend be
backend be
    server s1 127.0.0.1:$origin_port
CFG
"$bin/httporigin" "$origin_port" 300 >"$work/origin.log" 2>&1 &
pids="$pids $!"
"$sluice" -d -f "$work/cfg" >"$work/sluice.log" 2>&1 &
sl_pid=$!; pids="$pids $sl_pid"
i=0
until cli "show info" 2>/dev/null | grep -q '^CurrConns:'; do
	i=$((i + 1)); [ $i -lt 50 ] || { echo "FAIL: sluice did not start"; cat "$work/sluice.log"; exit 1; }
	sleep 0.1
done

# a few connections first, so that what every run allocates once (threads'
# spare buffers, caches) is in the baseline
echo close | python3 "$src/idleconns.py" 127.0.0.1 "$fe_port" 20 60 >/dev/null ||
	bad "warm-up connections failed"
sleep 0.5
rss0=$(rss_kb)

# the clients read their commands from a fifo, held open by this shell
mkfifo "$work/ctl"
python3 "$src/idleconns.py" 127.0.0.1 "$fe_port" "$conns" 240 <"$work/ctl" >"$work/client.out" 2>&1 &
cl_pid=$!; pids="$pids $cl_pid"
exec 3>"$work/ctl"
wait_line() {   # wait_line WORD: bounded wait for the client's line starting with WORD
	i=0
	until grep -q "^$1" "$work/client.out"; do
		if grep -q '^FAIL' "$work/client.out" || ! kill -0 "$cl_pid" 2>/dev/null; then
			cat "$work/client.out"; return 1
		fi
		i=$((i + 1)); [ $i -lt 2400 ] || { echo "no '$1' from the clients"; return 1; }
		sleep 0.1
	done
}
wait_line idle || bad "the first requests failed"
# the requests' buffers and transactions went back to the pools, which
# return what stays unused within a few seconds: bounded poll
i=0
while :; do
	rss1=$(rss_kb)
	per=$(( (rss1 - rss0) * 1024 / conns ))
	[ "$per" -lt "$idle_max" ] || [ $i -ge 100 ] || [ $memcheck = 0 ] && break
	i=$((i + 1)); sleep 0.2
done
cur=$(cli "show info" | sed -n 's/^CurrConns: //p')
echo "RSS: start $rss0 kB, with $conns idle connections $rss1 kB ($per bytes each; CurrConns $cur)"
cli "show pools" | grep -E 'Pool (stream|http_txn|buffer) '
[ "${cur:-0}" -ge "$conns" ] || bad "only $cur connections open"
[ "$per" -lt "$idle_max" ] || [ $memcheck = 0 ] ||
	bad "$per bytes per idle connection (bound $idle_max)"

echo again >&3
wait_line again || bad "a second request on the idle connections failed"
echo close >&3
wait_line closed || bad "the clients could not close"
exec 3>&-
wait "$cl_pid" 2>/dev/null

# every connection gone, then memory back near the start: twice the start
# or the start plus 4 MB, whichever is less (bounded poll: the pools give
# memory back a second or two after it stopped being used; the idle
# server connections go at pool-purge-delay, 5 s)
limit=$(( rss0 * 2 < rss0 + 4096 ? rss0 * 2 : rss0 + 4096 ))
i=0
while [ $i -lt 100 ]; do
	cur=$(cli "show info" | sed -n 's/^CurrConns: //p')
	rss2=$(rss_kb)
	[ "${cur:-1}" = 0 ] && { [ "$rss2" -le "$limit" ] || [ $memcheck = 0 ]; } && break
	i=$((i + 1)); sleep 0.2
done
echo "RSS after the close: $rss2 kB (limit $limit kB); CurrConns $cur"
[ "${cur:-1}" = 0 ] || bad "$cur connections left"
[ "$rss2" -le "$limit" ] || [ $memcheck = 0 ] ||
	bad "memory did not come back: $rss2 kB, start $rss0 kB"
pools=$(cli "show pools")
echo "$pools" | grep -vE '^(Dumping|$)'
used() { echo "$pools" | sed -n "s/.*Pool $1 .* \([-0-9]*\) used$/\1/p"; }
[ "$(used stream)" = 0 ] || bad "streams still in use: $(used stream)"
[ "$(used http_txn)" = 0 ] || bad "transactions still in use: $(used http_txn)"

if grep -Ei 'watchdog|ALERT|WARNING' "$work/sluice.log" | head -5 | grep .; then
	bad "sluice complained (above)"
fi
kill -0 "$sl_pid" 2>/dev/null || bad "sluice died"
kill -INT "$sl_pid"; wait "$sl_pid" 2>/dev/null
if grep -E 'Sanitizer|runtime error' "$work/sluice.log" | head -5 | grep .; then
	bad "sanitizer report (above)"
fi
[ $fail -eq 0 ] && echo "PASS: $conns idle connections, $per bytes of RSS each; memory back after they closed"
exit $fail
