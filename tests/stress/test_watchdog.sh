#!/bin/sh
# Watchdog: a thread burning CPU inside one loop iteration for less than a
# period is left alone; one that stays stuck gets a warning naming its task,
# then a dump of every thread and an abort. (That it stays silent under a
# flood of connections is checked by test_tcp_10k.sh.)
. "$(dirname "$0")/lib.sh"
port=$(free_port)
cat >"$work/cfg" <<CFG
global
    nbthread 2
    stats socket $work/stats.sock level admin
defaults
    mode tcp
    timeout client 5s
    timeout server 5s
    timeout connect 1s
listen l
    bind 127.0.0.1:$port
    server s 127.0.0.1:1
CFG
start_sluice
pid=$sl_pid
log=$work/sluice.log
out=$(cli "debug dev loop 100")
echo "$out" | grep -q "Permission denied" || { echo "FAIL: debug dev without expert mode"; fail=1; }
cli "expert-mode on; debug dev loop 300" | grep -q "looped for 300 ms" ||
	{ echo "FAIL: short loop did not complete"; fail=1; }
kill -0 $pid || { echo "FAIL: died on a short loop"; fail=1; }
grep -q watchdog "$log" && { echo "FAIL: watchdog fired on a 300 ms loop"; fail=1; }

# The watchdog counts the thread's CPU time, as HAProxy's does: on a busy
# machine (a sanitizer build next to other jobs) the stuck thread may get
# a fifth of a CPU, so the loop lasts long enough in wall time to burn the
# two periods anyway. The CLI command runs in the background: its thread
# aborts the process long before the loop's end.
cli "expert-mode on; debug dev loop 40000 lock" >/dev/null &
# the watchdog must abort the process: wait for it, bounded (a process that
# survived would otherwise keep this test waiting forever)
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 450 ]; do i=$((i + 1)); sleep 0.1; done
kill -0 $pid 2>/dev/null && { echo "FAIL: still running 45 s after the stuck loop"; kill -KILL $pid; }
wait $pid
status=$?
[ $status -eq 134 ] || { echo "FAIL: expected abort (134), got $status"; fail=1; }
grep -q '^\[WARNING\] watchdog: thread [12] has been running one loop iteration' "$log" ||
	{ echo "FAIL: no warning"; fail=1; }
grep -q 'task=cli' "$log" || { echo "FAIL: warning does not name the task"; fail=1; }
grep -q '^\[ALERT\] watchdog: a thread is stuck' "$log" || { echo "FAIL: no panic"; fail=1; }
grep -q 'locks_held=other:debug(0x' "$log" ||
	{ echo "FAIL: the dump does not name the lock the stuck thread holds"; fail=1; }
[ "$(grep -c '^  thread [12]: loops=' "$log")" -ge 3 ] ||
	{ echo "FAIL: not every thread dumped"; fail=1; }
[ $fail -eq 0 ] && echo "watchdog: warned, dumped and aborted as expected"
[ $fail -eq 0 ] || cat "$log"
exit $fail
