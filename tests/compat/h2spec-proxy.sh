#!/bin/sh
# Usage: h2spec-proxy.sh [PROGRAM]
#
# Starts PROGRAM (default ./sluice; /usr/sbin/haproxy gives the reference)
# with two HTTP/2 frontends in front of a local origin, and runs
# tests/compat/h2spec.sh against each: h2c by prior knowledge
# (`bind ... proto h2`) and ALPN h2 over TLS (`bind ... ssl crt ... alpn h2`).
# Not run by `make test`. Exit status: 0 when both pass every case, 77
# when h2spec is not installed, 1 otherwise.
# Reference (HAProxy 2.6.12, Debian 12, h2spec v2.2.1): 145/145 in each mode.
top=$(cd "$(dirname "$0")/../.." && pwd)
prog=${1:-$top/sluice}
certs=$top/reg-tests/ssl/certs
work=$(mktemp -d)
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
h2c=$(free_port) tls=$(free_port) origin=$(free_port)
cat >"$work/cfg" <<CFG
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend h2c
    bind 127.0.0.1:$h2c proto h2
    default_backend be
frontend h2tls
    bind 127.0.0.1:$tls ssl crt $certs/www.pem alpn h2
    default_backend be
backend be
    server origin 127.0.0.1:$origin
frontend origin
    bind 127.0.0.1:$origin
    http-request return status 200 content-type text/plain string "hello"
CFG
"$prog" -d -f "$work/cfg" >"$work/proxy.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
# wait for the last listener
i=0
until python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$tls),0.2)" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -ge 30 ] || ! kill -0 $pid 2>/dev/null; then
		echo "h2spec-proxy: $prog did not start; its output ends with:"
		tail -n 10 "$work/proxy.log"
		exit 1
	fi
	sleep 0.1
done

rc=0
echo "== h2c (prior knowledge) on 127.0.0.1:$h2c"
sh "$top/tests/compat/h2spec.sh" 127.0.0.1 "$h2c"
r=$?
[ $r -eq 77 ] && exit 77
[ $r -eq 0 ] || rc=1
echo "== h2 over TLS (ALPN) on 127.0.0.1:$tls"
sh "$top/tests/compat/h2spec.sh" 127.0.0.1 "$tls" --tls || rc=1
exit $rc
