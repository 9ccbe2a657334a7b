#!/usr/bin/env python3
"""Writes the probe configurations of the keyword matrix.

For each keyword of keywords.txt (see extract.py), a few candidate
configurations that place the keyword where the manual says it is valid,
with arguments taken from ARGS below, from the manual's synopsis, or from
a short list of generic guesses. HAProxy picks the first candidate it
accepts (keyword_matrix.sh --refresh); sluice is then asked about that one.

Writes DIR/<n>.<i>.cfg for candidate <i> of keyword <n>, and prints
"<n> TAB <category> TAB <keyword> TAB <candidates>" per keyword. CLI
commands are not probed (a probe only runs `-c`).

Usage: probes.py KEYWORDS DIR REPO
"""

import os
import re
import sys

# Arguments for keywords the synopsis does not explain well: category ->
# keyword -> candidates, tried first. In a candidate, @CRT@, @CA@, @MAP@,
# @ERR@ stand for files of the probe directory or the tree.
ARGS = {
    "global": {
        "cpu-map": ["1 0"], "log": ["127.0.0.1:514 local0"],
        "stats": ["socket 127.0.0.1:9999", "timeout 1s", "maxconn 1"],
        "set-var": ["proc.x int(1)"], "setenv": ["X y"],
        "presetenv": ["X y"], "resetenv": ["HOME"], "unsetenv": ["X"],
        "h1-case-adjust": ["content-length Content-Length"],
        "lua-load": ["@LUA@"],
        "lua-load-per-thread": ["@LUA@"], "lua-prepend-path": ["/tmp/?.lua"],
        "ssl-dh-param-file": ["@CRT@"], "issuers-chain-path": ["/tmp"],
        "user": ["root"], "group": ["root"], "uid": ["0"], "gid": ["0"],
        "chroot": ["/tmp"], "pidfile": ["/tmp/kwm.pid"],
        "ssl-default-bind-options": ["no-sslv3"],
        "ssl-default-server-options": ["no-sslv3"],
        "ssl-default-bind-ciphers": ["HIGH"],
        "ssl-default-server-ciphers": ["HIGH"],
        "ssl-default-bind-ciphersuites": ["TLS_AES_128_GCM_SHA256"],
        "ssl-default-server-ciphersuites": ["TLS_AES_128_GCM_SHA256"],
        "ssl-default-bind-curves": ["X25519"], "ssl-server-verify": ["none"],
        "httpclient.resolvers.prefer": ["ipv4"],
        "httpclient.ssl.verify": ["none"],
        "httpclient.ssl.ca-file": ["@CA@"],
        "tune.ssl.keylog": ["on"], "tune.fd.edge-triggered": ["on"],
        "tune.sched.low-latency": ["on"], "tune.idle-pool.shared": ["on"],
        "profiling.tasks": ["on"], "numa-cpu-mapping": [""],
        "default-path": ["current"], "log-send-hostname": ["x"],
        "tune.ssl.default-dh-param": ["2048"],
        "tune.ssl.cachesize": ["1000"], "tune.bufsize": ["16384"],
        "tune.maxrewrite": ["1024"], "tune.http.cookielen": ["63"],
        "tune.recv_enough": ["10000"], "tune.zlib.memlevel": ["8"],
        "tune.zlib.windowsize": ["15"], "tune.comp.maxlevel": ["1"],
        "tune.pool-low-fd-ratio": ["20"], "tune.pool-high-fd-ratio": ["25"],
        "unix-bind": ["prefix /tmp"], "maxsslconn": ["100"],
        "node": ["n1"], "description": ["x"], "localpeer": ["n1"],
        "cluster-secret": ["s3cret"], "hard-stop-after": ["1s"],
        "grace": ["1s"], "tune.h2.header-table-size": ["4096"],
        "h1-case-adjust-file": ["@CASE@"], "httpclient.resolvers.id": ["dns"],
    },
    "proxy": {
        "acl": ["a src 127.0.0.1"], "bind": ["127.0.0.1:5"],
        "balance": ["roundrobin"], "capture cookie": ["c len 8"],
        "capture request header": ["host len 8"],
        "capture response header": ["server len 8"],
        "compression": ["algo gzip"], "cookie": ["SRV insert"],
        "default_backend": ["be"], "use_backend": ["be"],
        "default-server": ["inter 1s"], "dispatch": ["127.0.0.1:6"],
        "email-alert from": ["a@b"], "email-alert to": ["a@b"],
        "email-alert mailers": ["m"], "email-alert level": ["alert"],
        "email-alert myhostname": ["x"],
        "errorfile": ["503 @ERR@"], "errorfiles": ["he"],
        "errorloc": ["503 http://x/"], "errorloc302": ["503 http://x/"],
        "errorloc303": ["503 http://x/"], "force-persist": ["if TRUE"],
        "filter": ["compression", "trace"], "hash-type": ["consistent"],
        "http-check connect": [""], "http-check expect": ["status 200"],
        "http-check send": ["meth GET uri /"],
        "http-check send-state": [""], "http-check set-var": ["(check.x) int(1)"],
        "http-check unset-var": ["(check.x)"], "http-check comment": ["x"],
        "http-check disable-on-404": [""],
        "http-error": ["status 503"], "http-request": ["allow"],
        "http-response": ["allow"], "http-after-response": ["allow"],
        "http-reuse": ["safe"], "ignore-persist": ["if TRUE"],
        "load-server-state-from-file": ["none"],
        "log": ["127.0.0.1:514 local0", "global"],
        "log-format": ["%ci"], "log-format-sd": ["%ci"],
        "error-log-format": ["%ci"], "log-tag": ["x"],
        "max-keep-alive-queue": ["1"], "mode": ["http"],
        "monitor fail": ["if FALSE"], "monitor-uri": ["/m"],
        "option httpchk": ["GET /"], "option forwardfor": [""],
        "persist rdp-cookie": [""], "rate-limit sessions": ["10"],
        "redirect": ["location /x", "prefix /x"], "retry-on": ["conn-failure"],
        "server": ["s9 127.0.0.1:7"], "server-state-file-name": ["x"],
        "server-template": ["t 1-2 127.0.0.1:8"],
        "source": ["127.0.0.1"], "stats admin": ["if TRUE"],
        "stats auth": ["a:b"], "stats http-request": ["allow"],
        "stats realm": ["x"], "stats refresh": ["1s"], "stats scope": ["."],
        "stats show-desc": ["x"], "stats uri": ["/s"], "stats enable": [""],
        "stick match": ["src"], "stick on": ["src"],
        "stick store-request": ["src"], "stick store-response": ["src"],
        "stick-table": ["type ip size 1k"],
        "tcp-check connect": [""], "tcp-check expect": ["string x"],
        "tcp-check send": ["x"], "tcp-check send-binary": ["0a"],
        "tcp-check send-lf": ["%ci"], "tcp-check send-binary-lf": ["0a"],
        "tcp-check set-var": ["(check.x) int(1)"],
        "tcp-check unset-var": ["(check.x)"], "tcp-check comment": ["x"],
        "tcp-request connection": ["accept"],
        "tcp-request content": ["accept"], "tcp-request session": ["accept"],
        "tcp-response content": ["accept"],
        "tcp-request inspect-delay": ["1s"],
        "tcp-response inspect-delay": ["1s"],
        "unique-id-format": ["%ci"], "unique-id-header": ["X-Id"],
        "use-server": ["s1 if TRUE"], "use-fcgi-app": ["fa"],
        "external-check command": ["/bin/true"],
        "external-check path": ["/bin"], "fullconn": ["10"],
        "hash-balance-factor": ["150"], "id": ["42"],
        "description": ["x"], "declare capture": ["request len 8"],
    },
    "bind": {
        "crt": ["@CRT@"], "ca-file": ["@CA@ crt @CRT@ ssl"],
        "crl-file": ["@CA@ crt @CRT@ ssl"], "crt-list": ["@CRTLIST@ ssl"],
        "alpn": ["h2 ssl crt @CRT@"], "npn": ["h2 ssl crt @CRT@"],
        "ssl": ["crt @CRT@"], "verify": ["none ssl crt @CRT@"],
        "ciphers": ["HIGH ssl crt @CRT@"], "curves": ["X25519 ssl crt @CRT@"],
        "ecdhe": ["prime256v1 ssl crt @CRT@"],
        "ciphersuites": ["TLS_AES_128_GCM_SHA256 ssl crt @CRT@"],
        "ssl-min-ver": ["TLSv1.2 ssl crt @CRT@"],
        "ssl-max-ver": ["TLSv1.3 ssl crt @CRT@"],
        "tls-ticket-keys": ["@KEYS@ ssl crt @CRT@"],
        "ca-verify-file": ["@CA@ ssl crt @CRT@"],
        "ca-sign-file": ["@CRT@ ssl crt @CRT@"],
        "ca-ignore-err": ["all ssl crt @CRT@"],
        "crt-ignore-err": ["all ssl crt @CRT@"],
        "accept-netscaler-cip": ["1234"], "interface": ["lo"],
        "mode": ["600"], "user": ["root"], "group": ["root"], "uid": ["0"],
        "gid": ["0"], "level": ["admin"], "severity-output": ["string"],
        "proto": ["h2"], "thread": ["1"], "process": ["1"],
        "namespace": ["x"], "nice": ["1"], "maxconn": ["10"],
        "backlog": ["10"], "id": ["42"], "name": ["x"], "mss": ["1400"],
        "shards": ["1"], "expose-fd": ["listeners"], "tcp-ut": ["1s"],
    },
    "server": {
        "ca-file": ["@CA@ ssl"], "crl-file": ["@CA@ ssl verify required"],
        "crt": ["@CRT@ ssl verify none"], "alpn": ["h2 ssl verify none"],
        "npn": ["h2 ssl verify none"], "sni": ["str(x) ssl verify none"],
        "ciphers": ["HIGH ssl verify none"],
        "ciphersuites": ["TLS_AES_128_GCM_SHA256 ssl verify none"],
        "ssl-min-ver": ["TLSv1.2 ssl verify none"],
        "ssl-max-ver": ["TLSv1.3 ssl verify none"],
        "verify": ["none ssl"], "verifyhost": ["x ssl verify required ca-file @CA@"],
        "ssl": ["verify none"], "check-sni": ["x check check-ssl verify none"],
        "check-alpn": ["h2 check check-ssl verify none"],
        "check-ssl": ["check verify none"], "check-proto": ["h2 check"],
        "check-send-proxy": ["check"], "check-via-socks4": ["check socks4 127.0.0.1:9"],
        "agent-check": ["agent-port 9"], "agent-port": ["9 agent-check"],
        "agent-addr": ["127.0.0.1 agent-check agent-port 9"],
        "agent-send": ["x agent-check agent-port 9"],
        "agent-inter": ["1s agent-check agent-port 9"],
        "addr": ["127.0.0.1 check"], "port": ["9 check"],
        "inter": ["1s check"], "fastinter": ["1s check"],
        "downinter": ["1s check"], "rise": ["2 check"], "fall": ["2 check"],
        "cookie": ["c1"], "error-limit": ["5 check"], "id": ["42"],
        "init-addr": ["none", "last,libc,none"], "log-proto": ["octet-count"],
        "maxconn": ["10"], "maxqueue": ["10"], "minconn": ["1"],
        "max-reuse": ["10"], "observe": ["layer4"],
        "on-error": ["mark-down observe layer4"],
        "on-marked-down": ["shutdown-sessions"],
        "on-marked-up": ["shutdown-backup-sessions"],
        "pool-low-conn": ["1"], "pool-max-conn": ["10"],
        "pool-purge-delay": ["1s"], "proto": ["h2"], "redir": ["http://x"],
        "resolve-opts": ["allow-dup-ip"], "resolve-prefer": ["ipv4"],
        "resolve-net": ["127.0.0.0/8"], "resolvers": ["dns"],
        "proxy-v2-options": ["ssl send-proxy-v2"], "slowstart": ["1s"],
        "socks4": ["127.0.0.1:9"], "source": ["127.0.0.1"],
        "track": ["be/s1"], "weight": ["10"], "ws": ["auto"],
        "tcp-ut": ["1s"], "namespace": ["x"], "tls-tickets": ["ssl verify none"],
    },
    "action": {
        "add-acl": ["(@MAP@) x"], "del-acl": ["(@MAP@) x"],
        "del-map": ["(@MAP@) x"], "set-map": ["(@MAP@) x y"],
        "add-header": ["X y"], "set-header": ["X y"], "del-header": ["X"],
        "early-hint": ["Link </x>"], "replace-header": ["X a b"],
        "replace-value": ["X a b"], "replace-path": ["a b"],
        "replace-pathq": ["a b"], "replace-uri": ["a b"],
        "set-path": ["/x"], "set-pathq": ["/x"], "set-uri": ["/x"],
        "set-query": ["a=b"], "set-method": ["GET"], "set-status": ["503"],
        "auth": ["realm x"], "cache-use": ["c"], "cache-store": ["c"],
        "capture": ["src len 8", "src id 0"],
        "deny": ["", "deny_status 403"], "tarpit": [""], "return": ["status 200"],
        "redirect": ["location /x"], "normalize-uri": ["path-merge-slashes"],
        "do-resolve": ["(txn.ip,dns) str(x)"], "set-var": ["(txn.x) int(1)"],
        "set-var-fmt": ["(txn.x) %ci"], "unset-var": ["(txn.x)"],
        "sc-inc-gpc": ["(0,0)"], "sc-inc-gpc0": ["(0)"], "sc-inc-gpc1": ["(0)"],
        "sc-set-gpt": ["(0,0) 1"], "sc-set-gpt0": ["(0) 1"],
        "track-sc0": ["src"], "track-sc1": ["src"], "track-sc2": ["src"],
        "send-spoe-group": ["e g"], "set-dst": ["src"], "set-src": ["src"],
        "set-dst-port": ["int(1)"], "set-src-port": ["int(1)"],
        "set-log-level": ["info"], "set-mark": ["1"], "set-nice": ["1"],
        "set-tos": ["1"], "set-priority-class": ["int(1)"],
        "set-priority-offset": ["int(1)"], "set-timeout": ["server 1s"],
        "strict-mode": ["on"], "use-service": ["prometheus-exporter"],
        "wait-for-body": ["time 1s"], "switch-mode": ["http"],
        "expect-proxy": ["layer4"], "expect-netscaler-cip": ["layer4"],
    },
    "converter": {
        "add_item": ["-,txn.x", "-,,x"], "hmac": ["sha256,a2V5"],
        "digest": ["sha256"], "jwt_verify": ["HS256,secret"],
        "mqtt_field_value": ["connect,protocol_name"],
        "aes_gcm_dec": ["128,txn.n,Zm9vYmFyMTIzNDU2Nzg5MA==,txn.t"],
        "table_gpc": ["1,li"], "table_gpc_rate": ["1,li"],
        "table_gpt": ["1,li"], "ipmask": ["24"], "regsub": ["a,b"],
        "field": ["1,:"], "word": ["1,:"], "concat": ["a,txn.x,b"],
        "strcmp": ["txn.x"], "secure_memcmp": ["txn.x"],
        "json_query": ["$.a"], "jwt_header_query": ["$.alg"],
        "jwt_payload_query": ["$.sub"], "ltime": ["%Y"], "utime": ["%Y"],
        "http_date": ["0"], "bytes": ["0,1"], "iif": ["a,b"],
        "fix_tag_value": ["35"], "protobuf": ["1.2"], "ungrpc": ["1.2"],
        "sha2": ["256"], "crc32": ["1"], "set-var": ["txn.y"],
        "unset-var": ["txn.y"], "in_table": ["li"],
    },
}

# Stick tables for the keywords that need one: the old counters and the
# arrays of 2.5+ cannot share a table.
TABLES = ["stick-table type ip size 1k store gpc0,gpc1,gpt0,gpc0_rate(1s),"
          "gpc1_rate(1s),conn_cnt,conn_cur,conn_rate(1s),sess_cnt,"
          "sess_rate(1s),http_req_cnt,http_req_rate(1s),http_err_cnt,"
          "http_err_rate(1s),http_fail_cnt,http_fail_rate(1s),bytes_in_cnt,"
          "bytes_in_rate(1s),bytes_out_cnt,bytes_out_rate(1s),server_id",
          "stick-table type ip size 1k store gpc(2),gpt(2),gpc_rate(2,1s)"]

# Bind and server options that only make sense on a TLS line: their probe
# with "ssl" comes first.
TLS_OPTION = re.compile(r"^(force-|no-ssl|no-tls|ssl|prefer-client|strict-sni|"
                        r"allow-0rtt|crt|ca-|crl-|no-ca-names|generate-cert|"
                        r"npn|alpn|ciphers|curves|ecdhe|verify|tls-tickets|"
                        r"sni|no-verifyhost|send-proxy-v2-ssl)")

# A value for an argument of the manual's synopsis, by its name.
PLACEHOLDER = [
    (r"time|timeout|delay|period|interval", "1s"),
    (r"dir", "/tmp"),
    (r"file|path", "@MAP@"),
    (r"addr|address|ip|host|network", "127.0.0.1"),
    (r"fmt|format", "%ci"),
    (r"expr|sample|key", "src"),
    (r"number|num|size|value|int|count|nb|max|min|port|id|level|ratio|"
     r"limit|conns|bytes|rate|weight|mark|tos|nice|code|status", "1"),
    (r".", "x"),
]
GENERIC = ["", "1", "x", "1s", "on", "127.0.0.1:9"]


def from_synopsis(kw, synopsis):
    """Mandatory arguments of <synopsis> (those before the first [ or {),
    with a plausible value for each placeholder."""
    rest = synopsis[synopsis.find(kw) + len(kw):] if kw in synopsis else ""
    rest = re.sub(r"^\([^)]*\)", "", rest)
    out = []
    for tok in rest.split():
        if tok[0] in "[{|" or tok in ("if", "unless", ":"):
            break
        m = re.match(r"^<([^>]*)>", tok)
        if not m:
            out.append(tok)
            continue
        for pat, val in PLACEHOLDER:
            if re.search(pat, m.group(1)):
                out.append(val)
                break
    return " ".join(out)


def uniq(seq):
    out = []
    for s in seq:
        if s not in out:
            out.append(s)
    return out


class Cfg:
    """The probe skeleton: a global section, a defaults section, a listen
    section "li" (or a frontend "fe" or a backend "be" instead), and a
    backend "be"; every line of the probe goes into one of its slots."""

    def __init__(self, mode="http"):
        self.glob, self.dflt, self.proxy, self.sections = [], [], [], []
        self.kind, self.mode, self.bind, self.server = "listen", mode, "", ""

    def text(self):
        t = ["global"] + ["  " + g for g in self.glob]
        t += ["defaults d", "  mode " + self.mode, "  timeout client 1s",
              "  timeout server 1s", "  timeout connect 1s"]
        t += ["  " + d for d in self.dflt]
        t += self.sections
        bind = "  bind 127.0.0.1:1" + (" " + self.bind if self.bind else "")
        srv = "  server s1 127.0.0.1:2" + \
            (" " + self.server if self.server else "")
        body = ["  " + p for p in self.proxy]
        if self.kind == "listen":
            t += ["listen li", bind] + body + [srv]
        elif self.kind == "frontend":
            t += ["frontend fe", bind] + body + ["  default_backend be"]
        if self.kind == "backend":
            t += ["backend be"] + body + [srv]
        else:
            t += ["backend be", "  server s1 127.0.0.1:3"]
        return "\n".join(t) + "\n"


def probes_global(kw, syn):
    out = []
    for a in uniq(ARGS["global"].get(kw, []) + [from_synopsis(kw, syn)] +
                  GENERIC):
        c = Cfg()
        c.glob.append((kw + " " + a).strip())
        if kw.startswith("httpclient.resolvers"):
            c.sections += ["resolvers dns", "  nameserver n 127.0.0.1:53"]
        out.append(c)
    return out


def probes_proxy(kw, where, syn):
    if "l" in where and kw != "default_backend":
        kind = "listen"
    elif "f" in where:
        kind = "frontend"
    elif "b" in where:
        kind = "backend"
    else:
        kind = "defaults"
    args = ARGS["proxy"].get(kw, [])
    if kw.startswith("option ") or kw.startswith("no option "):
        args = args + [""]
    out = []
    for a in uniq(args + [from_synopsis(kw, syn)] + GENERIC):
        for mode in ("http", "tcp"):
            c = Cfg(mode)
            line = (kw + (a if a.startswith("(") else " " + a)).strip()
            if kind == "defaults":
                c.dflt.append(line)
            else:
                c.kind = kind
                c.proxy.append(line)
            if kw.startswith("email-alert"):
                c.sections += ["mailers m", "  mailer m1 127.0.0.1:25"]
                c.proxy += ["email-alert from a@b", "email-alert to a@b",
                            "email-alert mailers m"]
            if kw == "errorfiles":
                c.sections += ["http-errors he", "  errorfile 503 @ERR@"]
            if kw == "use-fcgi-app":
                c.sections += ["fcgi-app fa", "  docroot /tmp"]
            if kw.startswith("stick ") or kw == "stats admin":
                c.proxy.append("stick-table type ip size 1k")
            if kw == "use-fcgi-app":
                c.proxy.append("server f 127.0.0.1:9 proto fcgi")
            out.append(c)
            # what quiets HAProxy's warnings: a log address for the log
            # formats, the option that runs the check rules
            for extra, glob in ((["log 127.0.0.1:514 local0"], []),
                                (["option httpchk"], []),
                                (["option tcp-check"], []),
                                (["option external-check"],
                                 ["external-check", "insecure-fork-wanted"])):
                c2 = Cfg(mode)
                c2.kind, c2.dflt, c2.sections = c.kind, c.dflt, c.sections
                c2.proxy, c2.glob = c.proxy + extra, glob
                out.append(c2)
    return out


def probes_bind(kw, syn):
    out = []
    variants = ("", " ssl crt @CRT@")
    if TLS_OPTION.match(kw):
        variants = variants[::-1]
    for a in uniq(ARGS["bind"].get(kw, []) + [from_synopsis(kw, syn)] +
                  GENERIC):
        for ssl in variants:
            c = Cfg()
            c.bind = (kw + " " + a).strip() + ssl
            out.append(c)
    return out


def probes_server(kw, syn):
    out = []
    for a in uniq(ARGS["server"].get(kw, []) + [from_synopsis(kw, syn)] +
                  GENERIC):
        extras = ["", " ssl verify none", " check"]
        if TLS_OPTION.match(kw):
            extras = [" ssl verify none", "", " check"]
        for extra in extras:
            c = Cfg()
            c.server = (kw + " " + a).strip() + extra
            if kw.startswith("resolve") or kw == "init-addr":
                c.sections += ["resolvers dns", "  nameserver n 127.0.0.1:53"]
            out.append(c)
    return out


RULE = {"http-request": "http-request", "http-response": "http-response",
        "http-after-response": "http-after-response",
        "tcp-request-connection": "tcp-request connection",
        "tcp-request-session": "tcp-request session",
        "tcp-request-content": "tcp-request content",
        "tcp-response-content": "tcp-response content"}


def probes_action(cat, kw, syn):
    out = []
    for a in uniq(ARGS["action"].get(kw, []) + [from_synopsis(kw, syn)] +
                  GENERIC):
        line = RULE[cat] + " " + kw + (a if a.startswith("(") else " " + a)
        for mode in ("http", "tcp"):
            if mode == "tcp" and cat.startswith("http"):
                continue
            for table in [None] + TABLES:
                c = Cfg(mode)
                c.proxy.append(line.strip())
                if table:
                    c.proxy.append(table)
                if kw == "capture":
                    c.proxy += ["declare capture request len 8",
                                "declare capture response len 8"]
                if kw in ("cache-use", "cache-store"):
                    c.sections += ["cache c", "  total-max-size 4"]
                if kw == "do-resolve":
                    c.sections += ["resolvers dns",
                                   "  nameserver n 127.0.0.1:53"]
                out.append(c)
    return out


def sample_places(expr):
    """Where a sample expression is tried: request, response, TCP."""
    return [("http", "http-request set-var(txn.p) " + expr),
            ("http", "http-response set-var(txn.p) " + expr),
            ("tcp", "tcp-request content set-var(txn.p) " + expr),
            ("http", "tcp-request connection set-var(sess.p) " + expr)]


def fetch_args(kw, syn):
    # the manual's mandatory arguments first: HAProxy also accepts a few
    # fetches without them (str, meth, env), which is not what is measured
    m = re.match(r"^[^(\s]*\(([^)]*)\)", syn)
    cands = []
    if m:
        mand = from_synopsis("", "(x) " + re.split(r"\[", m.group(1))[0]
                             .replace(",", " "))
        if mand:
            cands.append("%s(%s)" % (kw, mand.replace(" ", ",")))
    cands.append(kw)
    cands += ["%s(%s)" % (kw, a) for a in
              ("1", "x", "li", "be", "be/s1", "txn.x", "0,1", "host",
               "10.0.0.1", "::1", "ul", "ul,g", "1,li", "0,li")]
    return cands


def probes_fetch(kw, syn):
    out = []
    for expr in uniq(fetch_args(kw, syn)):
        tables = [None] + (TABLES if re.match(r"^(sc[0-9]?|src|table)_", kw)
                           else [])
        for mode, line in sample_places(expr):
            for table in tables:
                c = Cfg(mode)
                c.proxy.append(line)
                if table:
                    c.proxy.append(table)
                if kw in ("http_auth", "http_auth_group"):
                    c.sections += ["userlist ul", "  group g",
                                   "  user u insecure-password p groups g"]
                out.append(c)
    return out


def probes_converter(kw, syn):
    m = re.match(r"^[^(\s]*\(([^)]*)\)", syn)
    args = ARGS["converter"].get(kw, [])
    if m:
        mand = from_synopsis("", "(x) " + re.split(r"\[", m.group(1))[0]
                             .replace(",", " "))
        args.append(mand.replace(" ", ","))
    # without arguments last: HAProxy 2.6 accepts a converter whose
    # mandatory argument is missing (add, ltrim...) and computes with an
    # empty one; sluice refuses that on purpose
    args += ["1", "x", "@MAP@", "li", "txn.x", "1,x", ""]
    out = []
    for a in uniq(args):
        conv = kw + ("(%s)" % a if a else "")
        if kw.startswith("map_") and kw.endswith("_int"):
            conv = conv.replace("@MAP@", "@MAPINT@")
        elif kw.startswith("map_") and kw.endswith("_ip"):
            conv = conv.replace("@MAP@", "@MAPIP@")
        for fetch in ("str(x)", "int(1)", "src", "bin(0a)"):
            for mode, line in sample_places(fetch + "," + conv)[:3]:
                c = Cfg(mode)
                c.proxy.append(line)
                if kw.startswith("table_") or kw == "in_table":
                    for t in TABLES:
                        ct = Cfg(mode)
                        ct.proxy += [line, t.replace("type ip",
                                                     "type string")]
                        out.append(ct)
                out.append(c)
    return out


SECTION_BODIES = {
    "userlist": [["  user u insecure-password p"], ["  group g"]],
    "peers": [["  peer n1 127.0.0.1:10000"],
              ["  bind 127.0.0.1:10000", "  server n1"]],
    "resolvers": [["  nameserver n 127.0.0.1:53"]],
    "mailers": [["  mailer m1 127.0.0.1:25"]],
    "ring": [["  size 32768"], ["  format rfc5424", "  size 32768"]],
    "program": [["  command /bin/true"]],
    "cache": [["  total-max-size 4"]],
    "fcgi-app": [["  docroot /tmp"]],
    "log-forward": [["  bind 127.0.0.1:1514", "  log 127.0.0.1:514 local0"],
                    ["  dgram-bind 127.0.0.1:1514",
                     "  log 127.0.0.1:514 local0"]],
    "http-errors": [["  errorfile 503 @ERR@"]],
}


def probes_section(kw):
    out = []
    for body in SECTION_BODIES.get(kw, [[]]):
        for glob in ([], ["localpeer n1"], ["master-worker"]):
            c = Cfg()
            c.glob += glob
            c.sections += [kw + " " + ("n1" if kw == "peers" else "s")] + body
            out.append(c)
    return out


def probes(cat, kw, where, syn):
    if cat == "global":
        return probes_global(kw, syn)
    if cat == "proxy":
        return probes_proxy(kw, where, syn)
    if cat == "bind":
        return probes_bind(kw, syn)
    if cat == "server":
        return probes_server(kw, syn)
    if cat in RULE:
        return probes_action(cat, kw, syn)
    if cat == "fetch":
        return probes_fetch(kw, syn)
    if cat == "converter":
        return probes_converter(kw, syn)
    if cat == "section":
        return probes_section(kw)
    return []


def with_experimental(cands):
    """The candidates again, with expose-experimental-directives: 2.6
    hides a few keywords behind it (tune.fd.edge-triggered,
    normalize-uri)."""
    out = []
    for c in cands:
        e = Cfg(c.mode)
        e.__dict__.update(c.__dict__)
        e.glob = ["expose-experimental-directives"] + c.glob
        out.append(e)
    return cands + out


def aux_files(d, repo):
    """Files the probes name. The certificates are the reg-tests' own."""
    certs = os.path.join(repo, "reg-tests/ssl/certs")
    files = {"@CRT@": os.path.join(certs, "backend.pem"),
             "@CA@": os.path.join(certs, "ca.pem")}
    for name, tag, text in (
            ("map.txt", "@MAP@", "x y\n"),
            ("map_int.txt", "@MAPINT@", "x 1\n"),
            ("map_ip.txt", "@MAPIP@", "x 127.0.0.1\n"),
            ("case.txt", "@CASE@", "content-length Content-Length\n"),
            ("err.http", "@ERR@",
             "HTTP/1.0 503 Unavailable\r\ncontent-length: 0\r\n\r\n"),
            ("probe.lua", "@LUA@", "-- empty\n"),
            ("tls.keys", "@KEYS@",
             "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4\n"
             * 3),
            ("crt.list", "@CRTLIST@", files["@CRT@"] + "\n")):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        files[tag] = os.path.join(d, name)
    return files


def main():
    kwfile, d, repo = sys.argv[1:4]
    files = aux_files(d, repo)
    n = 0
    with open(kwfile) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cat, kw, where, syn = (line.rstrip("\n").split("\t") + [""])[:4]
            cands = probes(cat, kw, where, syn)
            if cat not in ("fetch", "converter"):
                cands = with_experimental(cands)
            for i, c in enumerate(cands):
                text = c.text()
                for tag, path in sorted(files.items(), key=lambda t: -len(t[0])):
                    text = text.replace(tag, path)
                with open(os.path.join(d, "%d.%d.cfg" % (n, i)), "w") as o:
                    o.write(text)
            print("%d\t%s\t%s\t%d" % (n, cat, kw, len(cands)))
            n += 1


if __name__ == "__main__":
    main()
