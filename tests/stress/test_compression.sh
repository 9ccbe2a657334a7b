#!/bin/sh
# Stress: end-to-end integrity of large compressed bodies. An origin
# (python3) serves a 4 MB text body, with a Content-Length or chunked in
# random pieces with short pauses; sluice (2 threads) compresses it with
# gzip, deflate and raw-deflate for HTTP/1.1 clients and with gzip for an
# HTTP/2 client (curl), 8 transfers at a time, 48 in all. Every body is
# decompressed (python3's zlib) and compared with the origin's by sha256.
# Afterwards sluice must be alive with no connection left, then die from
# SIGINT without a leak (sanitizer build), and the CPU it used per MB
# compressed is printed (not a pass/fail figure: benchmarks
# live in bench/). Loopback only, each transfer bounded by 60 s.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 0; }
size=${STRESS_COMP_SIZE:-4194304}
rounds=${STRESS_COMP_ROUNDS:-2}

origin_port=$(free_port); fe_gz=$(free_port); fe_zl=$(free_port); fe_raw=$(free_port)
fe_h2=$(free_port)

# the body: words and numbers, compressible about 3:1 like real text
python3 - "$work/body" "$size" <<'PY'
import random, sys
r = random.Random(16)
words = [''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(2, 9)))
         for _ in range(5000)]
out, n = [], 0
while n < int(sys.argv[2]):
    w = r.choice(words) if r.random() < 0.9 else str(r.randint(0, 10**9))
    out.append(w); n += len(w) + 1
open(sys.argv[1], 'w').write(' '.join(out)[:int(sys.argv[2])])
PY
want=$(sha256sum <"$work/body" | cut -d' ' -f1)

cat >"$work/origin.py" <<'PY'
import http.server, random, socketserver, sys, time
body = open(sys.argv[1], 'rb').read()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        if self.path.startswith("/chunked"):
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            r = random.Random(self.path)
            off = 0
            while off < len(body):
                n = min(r.choice((1, 17, 1000, 4096, 16384, 65536, 200000)), len(body) - off)
                self.wfile.write(b"%x\r\n%s\r\n" % (n, body[off:off + n]))
                off += n
                if r.random() < 0.05:
                    time.sleep(0.01)
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[2])), H).serve_forever()
PY
python3 "$work/origin.py" "$work/body" "$origin_port" >"$work/origin.log" 2>&1 &
pids="$pids $!"

cat >"$work/cfg" <<CFG
global
    nbthread 2
    stats socket $work/stats.sock level admin
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    default_backend be
frontend gz
    bind 127.0.0.1:$fe_gz
    compression algo gzip
frontend zl
    bind 127.0.0.1:$fe_zl
    compression algo deflate
frontend raw
    bind 127.0.0.1:$fe_raw
    compression algo raw-deflate
frontend h2
    bind 127.0.0.1:$fe_h2 proto h2
    compression algo gzip
backend be
    server s1 127.0.0.1:$origin_port
CFG
"$sluice" -c -f "$work/cfg" >"$work/check.log" 2>&1 || { cat "$work/check.log"; echo "FAIL: configuration refused"; exit 1; }
start_sluice
# wait (bounded) for the origin, and make sure it is ours (the port was
# free a moment ago, another process may have taken it since)
i=0
until [ "$(curl -s -m 10 "http://127.0.0.1:$origin_port/cl" | sha256sum | cut -d' ' -f1)" = "$want" ]; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "FAIL: origin did not start"; cat "$work/origin.log"; exit 1; }
	sleep 0.1
done

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$sl_pid/stat"; }
t0=$(cpu_ticks)

# one transfer: <name> <port> <path> <fmt: gzip|zlib|raw> [curl options]
xfer() {
	name=$1; port=$2; path=$3; fmt=$4; shift 4
	curl -s -m 60 "$@" -o "$work/$name.out" -D "$work/$name.hdr" "http://127.0.0.1:$port$path"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: $name: curl failed ($rc)"; head -n 3 "$work/$name.hdr"; return 1; }
	grep -qi "^content-encoding: *$( [ "$fmt" = gzip ] && echo gzip || echo deflate)" \
		"$work/$name.hdr" || { echo "FAIL: $name: not compressed"; return 1; }
	got=$(python3 -c 'import hashlib, sys, zlib
w = {"gzip": 31, "zlib": 15, "raw": -15}[sys.argv[2]]
d = zlib.decompressobj(w)
out = d.decompress(open(sys.argv[1], "rb").read()) + d.flush()
print(hashlib.sha256(out).hexdigest() if d.eof and not d.unused_data else "truncated")' \
		"$work/$name.out" "$fmt")
	[ "$got" = "$want" ] || { echo "FAIL: $name: body differs ($got)"; return 1; }
	stat -c %s "$work/$name.out" >"$work/$name.len"
	rm -f "$work/$name.out"
}

n=0
for r in $(seq "$rounds"); do
	for path in /cl /chunked; do
		jobs=""
		for k in 1 2; do
			xfer "gz$r$k$n" "$fe_gz" "$path?$r$k" gzip -H "Accept-Encoding: gzip" & jobs="$jobs $!"
			xfer "zl$r$k$n" "$fe_zl" "$path?$r$k" zlib -H "Accept-Encoding: deflate" & jobs="$jobs $!"
			xfer "raw$r$k$n" "$fe_raw" "$path?$r$k" raw -H "Accept-Encoding: deflate" & jobs="$jobs $!"
			xfer "h2$r$k$n" "$fe_h2" "$path?$r$k" gzip --http2-prior-knowledge \
				-H "Accept-Encoding: gzip" & jobs="$jobs $!"
		done
		for j in $jobs; do wait "$j" || fail=1; done
		n=$((n + 1))
	done
done
total=$(( rounds * 2 * 8 ))
# and the same over keep-alive: 8 compressed bodies on one connection
set --
for k in 1 2 3 4 5 6 7 8; do set -- "$@" -o "$work/ka$k.out" "http://127.0.0.1:$fe_gz/cl?ka$k"; done
if curl -s -m 120 -H "Accept-Encoding: gzip" "$@"; then
	for k in 1 2 3 4 5 6 7 8; do
		got=$(python3 -c 'import gzip, hashlib, sys; print(hashlib.sha256(gzip.decompress(open(sys.argv[1], "rb").read())).hexdigest())' "$work/ka$k.out" 2>/dev/null)
		[ "$got" = "$want" ] || bad "keep-alive transfer $k differs"
	done
else
	bad "keep-alive transfers failed"
fi
total=$((total + 8))
t1=$(cpu_ticks)

kill -0 "$sl_pid" 2>/dev/null || { bad "sluice died"; tail -n 20 "$work/sluice.log"; exit 1; }
wait_no_conn
conns=$(cli "show info" | sed -n 's/^CurrConns: //p')
[ "$conns" = 0 ] || { bad "$conns connections left"; cli "show sess"; }

# SIGINT, as varnishtest stops it: a sanitizer build checks for leaks on
# the way out (zlib states and staging buffers included) and exits 23 if
# it finds one
kill -INT "$sl_pid"
wait "$sl_pid"
status=$?
[ "$status" -eq 130 ] || { bad "SIGINT: exit status $status, wanted 130"; tail -n 20 "$work/sluice.log"; }

hz=$(getconf CLK_TCK)
mb=$(( total * size / 1048576 ))
clen=$(cat "$work"/gz*.len 2>/dev/null | head -n 1)
echo "compressed $total bodies of $size bytes (gzip: ${clen:-?} bytes): sluice used" \
     "$(( (t1 - t0) * 1000 / hz )) ms of CPU for $mb MB, $(( (t1 - t0) * 1000000 / hz / (mb > 0 ? mb : 1) )) us/MB"
[ $fail -eq 0 ] && echo "PASS: every compressed body decompressed to the origin's bytes"
exit $fail
