#!/bin/sh
# Stress: two sluice peers on two threads each share a table.
#
# Phase 1: 100,000 entries are set in A through its CLI before B starts;
# B, when it connects, is taught all of them (A pushes its table in bounded
# batches) and must hold 100,000 entries within 20 s.
# Phase 2: 20,000 connections from 2,000 loopback sources, 10 requests
# each, tracked by `http-request track-sc0 src` on A: B learns every
# source with http_req_cnt=10 (the last update of each entry wins).
#
# Both: zero watchdog warning on either side, both alive. Loopback only,
# bounded in time.
. "$(dirname "$0")/lib.sh"

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
pa=$(free_port); pb=$(free_port); fe=$(free_port)
for n in a b; do
	cat >"$work/$n.cfg" <<CFG
global
    nbthread 2
    stats socket $work/$n.sock level admin
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
peers p
    peer A 127.0.0.1:$pa
    peer B 127.0.0.1:$pb
    table t type ip size 300k expire 10m store gpc0,http_req_cnt
CFG
done
cat >>"$work/a.cfg" <<CFG
frontend fe
    bind 127.0.0.1:$fe backlog 4096
    http-request track-sc0 src table p/t
    http-request return status 200
CFG
clin() { echo "$2" | socat -t 5 - "UNIX-CONNECT:$work/$1.sock"; }
start() {
	"$sluice" -d -L "$2" -f "$work/$1.cfg" >"$work/$1.log" 2>&1 &
	pids="$pids $!"
	i=0
	until clin "$1" "show info" 2>/dev/null | grep -q '^CurrConns:'; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "FAIL: $1 did not start"; cat "$work/$1.log"; exit 1; }
		sleep 0.1
	done
}
used() { clin "$1" "show table p/t" | sed -n '1s/.*used://p'; }

start a A
python3 -c "
print('prompt')
for i in range(100000):
    print('set table p/t key 10.%d.%d.%d data.gpc0 %d' % (i >> 16, (i >> 8) & 255, i & 255, i & 1023))
print('quit')" | socat -t 60 - "UNIX-CONNECT:$work/a.sock" >/dev/null
[ "$(used a)" = 100000 ] || bad "A should hold 100000 entries, has $(used a)"

t0=$(date +%s%N)
start b B
i=0
while [ "$(used b)" != 100000 ] && [ $i -lt 400 ]; do i=$((i + 1)); sleep 0.05; done
t1=$(date +%s%N)
echo "phase 1: B holds $(used b) entries $(( (t1 - t0) / 1000000 )) ms after its start"
[ "$(used b)" = 100000 ] || bad "phase 1: B did not learn the 100000 entries"
clin b "show table p/t key 10.1.134.159" | grep -q 'gpc0=671 ' || bad "phase 1: a value was not learned"

out=$(python3 "$src/stkload.py" close "$fe" 2000 10 200 120) || bad "phase 2 timed out"
echo "phase 2: $(echo "$out" | tr '\n' ' ')"
i=0
while [ "$(clin b "show table p/t data.http_req_cnt eq 10" | grep -c key=)" != 2000 ] && [ $i -lt 100 ]; do
	i=$((i + 1)); sleep 0.1
done
n=$(clin b "show table p/t data.http_req_cnt eq 10" | grep -c key=)
echo "phase 2: B has $n sources with http_req_cnt=10"
[ "$n" = 2000 ] || bad "phase 2: B should have 2000 sources with http_req_cnt=10"

for n in a b; do
	wdt=$(clin $n "show activity" | sed -n 's/^wdt_warnings: *\([0-9]*\).*/\1/p')
	echo "$n: watchdog warnings: ${wdt:-?}"
	[ "${wdt:-1}" -eq 0 ] || bad "$n: watchdog warnings: $wdt"
done
clin a "show peers" | grep 'id=B'
for p in $pids; do kill -0 "$p" 2>/dev/null || bad "a sluice died"; done
[ $fail = 0 ] && echo "PASS: peers sync"
exit $fail
