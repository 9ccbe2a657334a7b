#!/bin/sh
# Runs testssl.sh (Debian package testssl.sh) against a TLS frontend of
# sluice with the test certificates (RSA and ECDSA), and fails if it reports
# any finding rated HIGH or CRITICAL. Not run by `make test` (it takes
# about a minute and a half); run it after changing TLS defaults:
#   sh tests/compat/testssl.sh
# The test CA is given to testssl (--add-ca), so that the chain is judged as
# an operator's own CA would be. Findings about the certificates themselves
# (cert_*: the test certificates' 100-year validity, no CRL or OCSP URI) are
# printed but do not fail: they judge the operator's certificates, not the
# proxy.
top=$(cd "$(dirname "$0")/../.." && pwd)
certs=$top/reg-tests/ssl/certs
command -v testssl >/dev/null || { echo "testssl not installed (apt-get install testssl.sh)"; exit 1; }
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/cfg" <<CFG
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:$port ssl crt $certs/www.pem crt $certs/www-ecdsa.pem alpn http/1.1
    http-request return status 200 content-type text/plain string "hello"
CFG
"$top/sluice" -d -f "$work/cfg" >"$work/sluice.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
sleep 0.5
timeout 600 testssl --quiet --color 0 --warnings off --add-ca "$certs/ca.pem" \
	--jsonfile "$work/out.json" --ip 127.0.0.1 "www.test.local:$port" >"$work/out.txt" 2>&1
bad=$(python3 - "$work/out.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    if r.get("severity") in ("HIGH", "CRITICAL") and not r["id"].startswith("cert_"):
        print("%s %s: %s" % (r["severity"], r["id"], r["finding"]))
PY
)
python3 - "$work/out.json" <<'PY'
import json, sys, collections
rows = json.load(open(sys.argv[1]))
c = collections.Counter(r.get("severity") for r in rows)
print("testssl findings by severity:", dict(c))
for r in rows:
    if r.get("severity") in ("LOW", "MEDIUM", "HIGH", "CRITICAL"):
        print("  %s %s: %s" % (r["severity"], r["id"], r["finding"]))
PY
if [ -n "$bad" ]; then
	echo "$bad"
	echo "FAIL: testssl reports findings rated HIGH or CRITICAL"
	exit 1
fi
echo "testssl: no finding rated HIGH or CRITICAL"
