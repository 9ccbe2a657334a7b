#!/bin/sh
# Stress: the HTTP cache under concurrent storing, serving, expiring and
# evicting on both threads. An origin (python3) serves 120 URLs whose
# bodies (1 kB to 200 kB, some chunked, one in 8 without a lifetime that
# lets them be stored) are a function of the URL, with max-age=2 so that
# objects expire during the run; sluice (2 threads) caches them in 4 MB,
# far less than they weigh (about 12 MB), so objects are evicted all the
# time, some while clients read them. 16 HTTP/1.1 keep-alive clients and 2
# HTTP/2 clients (curl) fetch random URLs for a bounded time; every body is
# checked against the URL's bytes (sha256), whether it came from the cache
# or the origin. Afterwards: hits and evictions both happened, the cache's
# memory never exceeded its budget (show cache), no connection is left,
# and sluice dies from SIGINT without a leak (sanitizer build). Loopback
# only; about 15 s.
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 0; }
secs=${STRESS_CACHE_SECONDS:-8}

origin_port=$(free_port); fe=$(free_port); fe_h2=$(free_port)

cat >"$work/origin.py" <<'PY'
import hashlib, http.server, random, socketserver, sys
def body(n):
    r = random.Random(n)
    size = r.choice((1000, 5000, 16000, 40000, 90000, 200000))
    block = hashlib.sha256(str(n).encode()).hexdigest().encode() * 64
    return (block * (size // len(block) + 1))[:size]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        n = int(self.path.split("/")[-1])
        b = body(n)
        self.send_response(200)
        if n % 8:
            self.send_header("Cache-Control", "max-age=2")
        self.send_header("Content-Type", "application/octet-stream")
        if n % 3 == 0:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            off = 0
            while off < len(b):
                k = min(7000, len(b) - off)
                self.wfile.write(b"%x\r\n%s\r\n" % (k, b[off:off + k]))
                off += k
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
if __name__ == "__main__":
    S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 "$work/origin.py" "$origin_port" >"$work/origin.log" 2>&1 &
pids="$pids $!"

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
    bind 127.0.0.1:$fe_h2 proto h2
    http-request cache-use c
    http-response cache-store c
    http-after-response set-header X-Hit %[res.cache_hit]
    default_backend be
backend be
    server s1 127.0.0.1:$origin_port
cache c
    total-max-size 4
    max-object-size 300000
    max-age 2
CFG
"$sluice" -c -f "$work/cfg" >"$work/check.log" 2>&1 || { cat "$work/check.log"; echo "FAIL: configuration refused"; exit 1; }
start_sluice
i=0
until curl -s -m 5 -o /dev/null "http://127.0.0.1:$origin_port/1"; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "FAIL: origin did not start"; cat "$work/origin.log"; exit 1; }
	sleep 0.1
done

# the HTTP/1.1 clients: python threads on keep-alive connections
cat >"$work/client.py" <<'PY'
import hashlib, http.client, random, sys, threading, time
sys.path.insert(0, sys.argv[3])
from origin import body
port, secs = int(sys.argv[1]), float(sys.argv[2])
want = {n: hashlib.sha256(body(n)).hexdigest() for n in range(120)}
stats = {"req": 0, "hit": 0, "bad": 0}
lock = threading.Lock()
def run(seed):
    r = random.Random(seed)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    end = time.time() + secs
    req = hit = bad = 0
    while time.time() < end:
        n = int(r.triangular(0, 120, 10))
        try:
            c.request("GET", "/obj/%d" % n)
            resp = c.getresponse()
            data = resp.read()
        except Exception as e:
            bad += 1
            print("error on /obj/%d: %r" % (n, e))
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            continue
        req += 1
        if resp.status != 200 or hashlib.sha256(data).hexdigest() != want[n]:
            bad += 1
            print("bad body for /obj/%d: status %d, %d bytes, hit %s" %
                  (n, resp.status, len(data), resp.getheader("X-Hit")))
        elif resp.getheader("X-Hit") == "1":
            hit += 1
    with lock:
        stats["req"] += req; stats["hit"] += hit; stats["bad"] += bad
ts = [threading.Thread(target=run, args=(i,)) for i in range(16)]
for t in ts: t.start()
for t in ts: t.join()
print("h1: %(req)d requests, %(hit)d hits, %(bad)d bad" % stats)
sys.exit(1 if stats["bad"] or not stats["hit"] else 0)
PY

# the HTTP/2 clients: curl, one stream per connection (curl 7.88 fails
# several URLs on one prior-knowledge connection, whatever the server)
h2client() {
	id=$1
	end=$(( $(date +%s) + secs ))
	k=0
	while [ "$(date +%s)" -lt "$end" ]; do
		n=$(( (k * 7 + id * 13) % 40 ))
		curl -s -m 30 --http2-prior-knowledge -o "$work/h2.$id" "http://127.0.0.1:$fe_h2/obj/$n" ||
			{ echo "FAIL: h2 client $id: curl failed on /obj/$n"; return 1; }
		got=$(sha256sum <"$work/h2.$id" | cut -d' ' -f1)
		exp=$(cd "$work" && python3 -c 'import hashlib, sys; from origin import body; print(hashlib.sha256(body(int(sys.argv[1]))).hexdigest())' "$n")
		[ "$got" = "$exp" ] || { echo "FAIL: h2 body of /obj/$n differs"; return 1; }
		k=$((k + 1))
	done
	echo "h2 client $id: $k requests"
}

h2client 1 & h2a=$!
h2client 2 & h2b=$!
(cd "$work" && python3 client.py "$fe" "$secs" "$work") || bad "HTTP/1.1 clients"
wait "$h2a" || bad "HTTP/2 client 1"
wait "$h2b" || bad "HTTP/2 client 2"

kill -0 "$sl_pid" 2>/dev/null || { bad "sluice died"; tail -n 20 "$work/sluice.log"; exit 1; }
cli "show cache" >"$work/cache.txt"
used=$(awk '/^0x[0-9a-f]+ hash:/ { sub(/^size:/, "", $4); s += $4 } END { print s + 0 }' "$work/cache.txt")
[ "$used" -le 4194304 ] || bad "the cache holds $used bytes, more than its 4 MB"
cli "show stat" >"$work/stat.csv"
hits=$(python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = rows[0]; h[0] = h[0].lstrip("# ")
for r in rows[1:]:
    if len(r) > 2 and r[1] == "FRONTEND": print(r[h.index("cache_lookups")], r[h.index("cache_hits")])' "$work/stat.csv")
echo "cache: lookups and hits $hits; $(grep -c hash: "$work/cache.txt") objects, $used bytes at the end"
grep -q "warning\|WARNING: thread\|stuck" "$work/sluice.log" && bad "watchdog or warnings: $(grep -m1 -i 'warn\|stuck' "$work/sluice.log")"
wait_no_conn
conns=$(cli "show info" | sed -n 's/^CurrConns: //p')
[ "$conns" = 0 ] || { bad "$conns connections left"; cli "show sess"; }
kill -INT "$sl_pid"
wait "$sl_pid"
status=$?
[ "$status" -eq 130 ] || { bad "SIGINT: exit status $status, wanted 130"; tail -n 20 "$work/sluice.log"; }
[ $fail -eq 0 ] && echo "PASS: every body was the origin's, from the cache or not, within the cache's budget"
exit $fail
