#!/bin/sh
# The HTTP statistics page in a real browser: starts sluice with a page
# that allows admin actions, then headless Chromium driven by ChromeDriver
# (tests/e2e/webdriver.py) loads it, checks every proxy and server is
# there, puts a server in maintenance with the page's own form, and takes
# a screenshot. Loopback only; kills only the processes it started.
#
# Usage: sh tests/e2e/stats_page.sh [screenshot.png]
#   (default: a temporary file, removed; give a path to keep and look at it)
# Exit status 77 when Chromium or ChromeDriver is missing (make deps
# installs them).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
for b in /usr/bin/chromium /usr/bin/chromedriver; do
	[ -x "$b" ] || { echo "e2e: skipped: $b is missing (make deps installs it)"; exit 77; }
done
shot=${1:-}
work=$(mktemp -d)
[ -n "$shot" ] || shot="$work/stats.png"
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
set -- $ports
fe=$1 app=$2 wd=$3
cat > "$work/cfg" <<EOC
global
    nbthread 2
defaults
    mode http
    timeout connect 1s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:$fe
    stats enable
    stats uri /stats
    stats refresh 30s
    stats show-legends
    stats admin if TRUE
    default_backend app
backend app
    server web1 127.0.0.1:$app check inter 1s
    server web2 127.0.0.1:$app check inter 1s
backend other
    server alone 127.0.0.1:$app
listen appsrv
    bind 127.0.0.1:$app
    http-request return status 200
EOC
./sluice -d -f "$work/cfg" >"$work/sluice.log" 2>&1 &
spid=$!
/usr/bin/chromedriver --port="$wd" >"$work/chromedriver.log" 2>&1 &
dpid=$!
rc=1
for i in $(seq 1 50); do
	curl -s -o /dev/null "http://127.0.0.1:$fe/stats" && curl -s -o /dev/null \
	    "http://127.0.0.1:$wd/status" && { rc=0; break; }
	sleep 0.2
done
if [ $rc -eq 0 ]; then
	timeout 120 python3 tests/e2e/webdriver.py "http://127.0.0.1:$wd" \
	    "http://127.0.0.1:$fe/stats" "$shot"
	rc=$?
else
	echo "e2e: sluice or chromedriver did not start"
fi
kill "$dpid" "$spid" 2>/dev/null
wait "$dpid" "$spid" 2>/dev/null
if [ $rc -ne 0 ]; then
	echo "== sluice log"; tail -n 20 "$work/sluice.log"
	echo "== chromedriver log"; tail -n 20 "$work/chromedriver.log"
fi
[ "$shot" = "$work/stats.png" ] || echo "screenshot: $shot"
rm -rf "$work"
exit $rc
