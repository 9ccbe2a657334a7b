#!/bin/sh
# Watchdog: a thread burning CPU inside one loop iteration for less than a
# period is left alone; one that stays stuck gets a warning naming its task,
# then a dump of every thread and an abort. (That it stays silent under a
# flood of connections is checked by test_tcp_10k.sh.)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/cfg" <<CFG
global
    nbthread 2
    stats socket $work/s.sock level admin
defaults
    mode tcp
    timeout client 5s
    timeout server 5s
    timeout connect 1s
listen l
    bind 127.0.0.1:$port
    server s 127.0.0.1:1
CFG
cli() { echo "$1" | socat -t 10 - "UNIX-CONNECT:$work/s.sock"; }
fail=0

"$top/sluice" -d -f "$work/cfg" 2>"$work/err" &
pid=$!
# bounded wait for the stats socket (a sanitizer build on a loaded machine
# may take seconds to start)
i=0
until cli "show info" 2>/dev/null | grep -q '^Pid:'; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "FAIL: sluice did not start"; cat "$work/err"; exit 1; }
	sleep 0.1
done
out=$(cli "debug dev loop 100")
echo "$out" | grep -q "Permission denied" || { echo "FAIL: debug dev without expert mode"; fail=1; }
cli "expert-mode on; debug dev loop 300" | grep -q "looped for 300 ms" ||
	{ echo "FAIL: short loop did not complete"; fail=1; }
kill -0 $pid || { echo "FAIL: died on a short loop"; fail=1; }
grep -q watchdog "$work/err" && { echo "FAIL: watchdog fired on a 300 ms loop"; fail=1; }

cli "expert-mode on; debug dev loop 6000 lock" >/dev/null
# the watchdog must abort the process: wait for it, bounded (a process that
# survived the loop would otherwise keep this test waiting forever)
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
kill -0 $pid 2>/dev/null && { echo "FAIL: still running 30 s after the stuck loop"; kill -KILL $pid; }
wait $pid
status=$?
[ $status -eq 134 ] || { echo "FAIL: expected abort (134), got $status"; fail=1; }
grep -q '^\[WARNING\] watchdog: thread [12] has been running one loop iteration' "$work/err" ||
	{ echo "FAIL: no warning"; fail=1; }
grep -q 'task=cli' "$work/err" || { echo "FAIL: warning does not name the task"; fail=1; }
grep -q '^\[ALERT\] watchdog: a thread is stuck' "$work/err" || { echo "FAIL: no panic"; fail=1; }
grep -q 'locks_held=other:debug(0x' "$work/err" ||
	{ echo "FAIL: the dump does not name the lock the stuck thread holds"; fail=1; }
[ "$(grep -c '^  thread [12]: loops=' "$work/err")" -ge 3 ] ||
	{ echo "FAIL: not every thread dumped"; fail=1; }
[ $fail -eq 0 ] && echo "watchdog: warned, dumped and aborted as expected"
[ $fail -eq 0 ] || cat "$work/err"
exit $fail
