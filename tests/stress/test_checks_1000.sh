#!/bin/sh
# 1000 checked servers on 2 threads, every 200 ms: half of them on a closed
# port (layer-4 refusals), half answering HTTP checks through a frontend of
# the same process. Every server must reach its state (500 DOWN, 500 UP),
# the checks must keep running on both threads, and the watchdog must stay
# silent: no loop iteration does the work of many checks at once.
. "$(dirname "$0")/lib.sh"
port=$(free_port)
n=1000
{
	cat <<CFG
global
    nbthread 2
    stats socket $work/stats.sock level admin
defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 1s
frontend ok
    bind 127.0.0.1:$port
    http-request return status 200
backend many
    option httpchk GET /health
    default-server check inter 200ms rise 1 fall 1
CFG
	i=0
	while [ $i -lt $n ]; do
		if [ $((i % 2)) -eq 0 ]; then
			echo "    server s$i 127.0.0.1:1"
		else
			echo "    server s$i 127.0.0.1:$port"
		fi
		i=$((i + 1))
	done
} >"$work/cfg"
start_sluice
log=$work/sluice.log
# bounded wait for every server to settle
i=0
while :; do
	cli "show stat" >"$work/stat"
	down=$(grep -c '^many,s[0-9]*,\([^,]*,\)\{15\}DOWN,' "$work/stat")
	up=$(grep -c '^many,s[0-9]*,\([^,]*,\)\{15\}UP,' "$work/stat")
	[ "$down" -eq $((n / 2)) ] && [ "$up" -eq $((n / 2)) ] && break
	i=$((i + 1))
	[ $i -lt 100 ] || { bad "after 10 s: $down DOWN, $up UP of $n"; break; }
	sleep 0.1
done
# a few more rounds, then every UP server must have passed several checks
# and the checks must have run on both threads
sleep 2
cli "show stat" >"$work/stat"
grep '^many,s[0-9]*,' "$work/stat" | grep -q 'L7OK,200' || bad "no L7OK check"
grep '^many,s[0-9]*,' "$work/stat" | grep -q 'L4CON,' || bad "no L4CON check"
cli "show activity" >"$work/act"
tasks=$(sed -n 's/^tasks_run: *[0-9]* \[ \([0-9]*\) \([0-9]*\) \]/\1 \2/p' "$work/act")
set -- $tasks
[ "${1:-0}" -gt 1000 ] && [ "${2:-0}" -gt 1000 ] || bad "checks did not run on both threads: $tasks"
grep -q watchdog "$log" && bad "the watchdog fired"
kill -0 "$sl_pid" || bad "sluice died"
[ $fail -eq 0 ] && echo "checks: $n servers settled ($((n / 2)) DOWN, $((n / 2)) UP), both threads checking, no watchdog warning"
[ $fail -eq 0 ] || tail -n 40 "$log"
exit $fail
