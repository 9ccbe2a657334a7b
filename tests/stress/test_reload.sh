#!/bin/sh
# Stress: 50 reloads of a master-worker sluice under load, one of them with
# a broken configuration, first with keep-alive connections, then with one
# connection per request (wrk, bounded to a few seconds each, loopback
# only). Asserts: no socket error and no non-2xx response, the broken
# configuration refused without a blip, old workers gone after
# hard-stop-after, no descriptor leaked by the master. Then times five
# reloads, from SIGUSR2 to "Loading success." (the new worker is ready).
#
# SLUICE=/usr/sbin/haproxy runs the same test against HAProxy 2.6, which
# takes the same command line (-W -S) and prints the same master messages.
. "$(dirname "$0")/lib.sh"

command -v wrk >/dev/null || { echo "skipped: wrk is not installed"; exit 0; }
command -v socat >/dev/null || { echo "skipped: socat is not installed"; exit 0; }

port=$(free_port)
mcli() { echo "$1" | socat -t 5 - "UNIX-CONNECT:$work/master.sock"; }
# written aside then renamed: a worker may be reading the file right now
write_cfg() {
	cat >"$work/cfg.new" <<CFG
global
    nbthread 2
    hard-stop-after 3s
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:$port
    http-request return status 200 content-type text/plain string "gen $1"
$2
CFG
	mv -f "$work/cfg.new" "$work/cfg"
}

write_cfg 0 ""
"$sluice" -W -S "$work/master.sock" -f "$work/cfg" -p "$work/pid" >"$work/master.log" 2>&1 &
mpid=$!; pids="$pids $mpid"
i=0
until mcli "show proc" 2>/dev/null | grep -q '^# workers' &&
      curl -s -m 1 -o /dev/null "http://127.0.0.1:$port/"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "FAIL: did not start"; cat "$work/master.log"; exit 1; }
	sleep 0.1
done
fds_before=$(ls /proc/$mpid/fd | wc -l)

# <count> reloads every 0.15 s; the 13th of each run breaks the configuration
reloads() {
	n=1
	while [ $n -le "$1" ]; do
		sleep 0.15
		if [ $n -eq 13 ]; then
			write_cfg "$n" "    this-keyword-does-not-exist"
		else
			write_cfg "$n" ""
		fi
		kill -USR2 "$mpid"
		n=$((n + 1))
	done
}

for mode in keep-alive close; do
	hdr=""
	[ "$mode" = close ] && hdr="Connection: close"
	reloads 25 &
	rpid=$!
	wrk -t 2 -c 20 -d 5s ${hdr:+-H "$hdr"} "http://127.0.0.1:$port/" >"$work/wrk.$mode" 2>&1
	wait $rpid
	grep -E 'requests in|Socket errors|Non-2xx' "$work/wrk.$mode" | sed "s/^/$mode: /"
	grep -q 'Socket errors' "$work/wrk.$mode" && bad "$mode: socket errors"
	grep -q 'Non-2xx' "$work/wrk.$mode" && bad "$mode: non-2xx responses"
	grep -q 'requests in' "$work/wrk.$mode" || bad "$mode: wrk did not run"
done
# the last reloads settle, the old workers finish (hard-stop-after 3s)
sleep 4
proc=$(mcli "show proc")
echo "$proc" | head -2
echo "$proc" | grep -q 'old workers' && bad "old workers left after hard-stop-after"
echo "$proc" | grep -Eq '50 \[failed: 2\]' || bad "expected 50 reloads, 2 failed"
[ "$(grep -c 'Loading failure' "$work/master.log")" -eq 2 ] || bad "broken configurations not refused twice"
fds_after=$(ls /proc/$mpid/fd | wc -l)
echo "master descriptors: $fds_before before, $fds_after after"
[ "$fds_after" -le "$fds_before" ] || bad "the master leaked descriptors"

# time from SIGUSR2 to "Loading success."
times=""
for n in 1 2 3 4 5; do
	before=$(grep -c 'Loading success' "$work/master.log")
	t0=$(date +%s%N)
	kill -USR2 "$mpid"
	i=0
	while [ "$(grep -c 'Loading success' "$work/master.log")" -le "$before" ] && [ $i -lt 500 ]; do
		i=$((i + 1)); sleep 0.005
	done
	times="$times $(( ($(date +%s%N) - t0) / 1000000 ))"
	sleep 0.3
done
echo "reload to ready (ms):$times"

kill -INT "$mpid"; wait "$mpid" 2>/dev/null
pids=""
if [ $fail -ne 0 ]; then
	tail -20 "$work/master.log"
	exit 1
fi
echo "reload stress: ok"
