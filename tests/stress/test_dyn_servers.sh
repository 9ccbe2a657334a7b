#!/bin/sh
# Stress: servers added and deleted on the CLI under HTTP load.
# sluice (2 threads) balances a backend (roundrobin) over one permanent
# server and, DYN_ROUNDS times, a server added with `add server`, enabled,
# then disabled and deleted, while 4 keep-alive clients send
# requests for DYN_SECONDS. An idle connection to a server stays pooled for
# its pool-purge-delay (the added servers set 50ms) and `del server` refuses
# a server that still has one, as HAProxy: it is retried, a bounded number
# of times. Asserted: no failed request (the backend always
# has its permanent server), every round added and deleted its server,
# requests reached the added servers, sluice alive, no watchdog warning,
# and at a graceful stop exit status 0 (with a sanitizer build: no report).
# Loopback only; every wait is bounded.
. "$(dirname "$0")/lib.sh"
rounds=${DYN_ROUNDS:-60}
seconds=${DYN_SECONDS:-10}

fe=$(free_port); app=$(free_port); app2=$(free_port)
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
    bind 127.0.0.1:$fe
    default_backend be
backend be
    server s1 127.0.0.1:$app
listen app
    bind 127.0.0.1:$app
    http-request return status 200 content-type text/plain string app
listen app2
    bind 127.0.0.1:$app2
    http-request return status 200 content-type text/plain string app2
CFG
start_sluice

cat >"$work/load.py" <<'PY'
import http.client, sys, threading, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
stats = {"ok": 0, "fail": 0, "app2": 0}
lock = threading.Lock()
def run():
    end = time.time() + seconds
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while time.time() < end:
        try:
            c.request("GET", "/")
            r = c.getresponse()
            body = r.read()
            with lock:
                if r.status == 200:
                    stats["ok"] += 1
                    stats["app2"] += body == b"app2"
                else:
                    stats["fail"] += 1
        except Exception as e:
            with lock:
                stats["fail"] += 1
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
ts = [threading.Thread(target=run) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("requests=%d failures=%d to_added=%d" % (stats["ok"] + stats["fail"], stats["fail"], stats["app2"]))
sys.exit(1 if stats["fail"] else 0)
PY
python3 "$work/load.py" "$fe" "$seconds" >"$work/load.out" 2>&1 &
lp=$!; pids="$pids $lp"
sleep 0.5

pause=$(awk -v s="$seconds" -v n="$rounds" 'BEGIN { p = (s - 2) / n / 2; if (p < 0.01) p = 0.01; printf "%.3f", p }')
added=0 deleted=0 i=1
while [ $i -le "$rounds" ]; do
	out=$(cli "add server be/d$i 127.0.0.1:$app2 weight 10 pool-purge-delay 50ms")
	case "$out" in "New server registered."*) added=$((added + 1)) ;;
	*) bad "round $i: add server answered: $out"; break ;; esac
	cli "enable server be/d$i" >/dev/null
	sleep "$pause"
	cli "disable server be/d$i" >/dev/null
	n=0
	while :; do
		out=$(cli "del server be/d$i")
		case "$out" in
		"Server deleted."*) deleted=$((deleted + 1)); break ;;
		*"still has"*) n=$((n + 1)); [ $n -lt 200 ] || { bad "round $i: not deleted: $out"; break; }
		               sleep 0.02 ;;
		*) bad "round $i: del server answered: $out"; break ;;
		esac
	done
	kill -0 "$sl_pid" 2>/dev/null || { bad "sluice died at round $i"; break; }
	sleep "$pause"
	i=$((i + 1))
done
echo "rounds: $added added, $deleted deleted"
[ "$added" = "$rounds" ] && [ "$deleted" = "$rounds" ] || bad "not every round completed"

wait "$lp" || bad "failed requests"
cat "$work/load.out"
to_added=$(sed -n 's/.*to_added=\([0-9]*\).*/\1/p' "$work/load.out")
[ "${to_added:-0}" -gt 0 ] || bad "no request reached an added server"
cli "show servers state be" | grep -q " d[0-9]" && bad "a deleted server is still listed"
[ "$(cli "show activity" | sed -n 's/^wdt_warnings: *//p' | cut -d' ' -f1)" = 0 ] ||
	bad "watchdog warnings"

# graceful stop: exit 0, and nothing reported by a sanitizer
kill -USR1 "$sl_pid"
n=0
while kill -0 "$sl_pid" 2>/dev/null && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.1; done
if kill -0 "$sl_pid" 2>/dev/null; then
	bad "sluice did not stop"
else
	wait "$sl_pid" || bad "sluice exited with status $?"
fi
if grep -qE 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error|WARNING\] watchdog' \
        "$work/sluice.log"; then
	bad "sluice reported:"
	head -n 60 "$work/sluice.log"
fi
[ $fail = 0 ] && echo "PASS: dynamic servers under load"
exit $fail
