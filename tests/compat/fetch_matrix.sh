#!/bin/bash
# fetch_matrix.sh: where may each sample fetch appear? Asks HAProxy 2.6 and
# sluice the same question and prints where their answers differ.
#
# For every fetch keyword in sluice's fetch tables (src/expr/fetch_*.c,
# src/expr/vars.c, src/proxy/stream_smp.c), with plausible arguments, and
# for every place a sample can be written (see PLACES below), it writes a
# small configuration, runs `haproxy -c -f` and `sluice -c -f` on it, and
# classifies each answer:
#   OK    valid, no warning
#   WARN  valid, with a warning (an ACL that "will never match")
#   ERR   refused (exit code 1)
#   ?     anything else (a crash, another exit code)
# then prints the pairs that differ, with the first alert or warning of
# each side. Keywords only one side knows are listed apart and not tried.
# A second part checks that fetches naming a backend or a server refuse
# unknown names on both sides.
#
# A tool, not a test (`make test` does not run it): it takes a minute or
# two. Exit status 0 when both sides agree everywhere, 1 otherwise.
#
# Usage: tests/compat/fetch_matrix.sh [-k REGEX] [-p REGEX] [-v]
#   -k REGEX  only the fetch keywords matching REGEX (grep -E, anchored)
#   -p REGEX  only the places matching REGEX
#   -v        also list every HAProxy-only keyword, and print each
#             differing configuration
# Environment: SLUICE (default ./sluice), HAPROXY (default /usr/sbin/haproxy),
#   FETCH_MATRIX_CACHE (default /tmp/fetch_matrix-cache): HAProxy's answers
#   are kept there, per binary, so that a second run takes seconds

set -u
cd "$(dirname "$0")/../.." || exit 2

SLUICE=${SLUICE:-./sluice}
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
KW_RE='.*'
PLACE_RE='.*'
VERBOSE=0

while getopts 'k:p:v' opt; do
	case $opt in
	k) KW_RE=$OPTARG ;;
	p) PLACE_RE=$OPTARG ;;
	v) VERBOSE=1 ;;
	*) sed -n 's/^# \{0,1\}//; /^Usage/,/^Environment/p' "$0"; exit 2 ;;
	esac
done

. tests/compat/probe_lib.sh
probe_need_exec fetch_matrix "$SLUICE" "$HAPROXY"

TMP=$(mktemp -d /tmp/fetch_matrix.XXXXXX) || exit 2
trap 'rm -rf "$TMP"' EXIT
# HAProxy's answers are kept between runs, per HAProxy binary
CACHE=${FETCH_MATRIX_CACHE:-${TMPDIR:-/tmp}/fetch_matrix-cache}/v1-$(cksum <"$HAPROXY" | cut -d' ' -f1)
mkdir -p "$CACHE" || exit 2

# ---------------------------------------------------------------- keywords

# "keyword|ARGT_A,ARGT_B|mandatory" for each entry of sluice's fetch tables
# (only the tables of struct smp_fetch_kw: converters are skipped).
sluice_fetches() {
	awk '/struct smp_fetch_kw [a-z_]*\[\] = \{/ { in_t = 1; next }
	     in_t && /^};/ { in_t = 0 }
	     in_t' src/expr/fetch_*.c src/expr/vars.c src/proxy/stream_smp.c |
	sed -n 's/^[[:space:]]*{ *"\([^"]*\)", *[A-Za-z_0-9]*, *{ *\([^}]*\)}, *\([0-9]*\),.*/\1|\2|\3/p' |
	tr -d ' '
}

# HAProxy's own list (-dKsmp dumps its sample fetch keywords).
"$HAPROXY" -dKsmp -q -c -f /dev/null 2>/dev/null |
	sed -n 's/^\[[ Y.]*\] \([^:(]*\).*/\1/p' | sort -u >"$TMP/hap_kws"
sluice_fetches | cut -d'|' -f1 | sort -u >"$TMP/slu_kws"
declare -A HAP_KW
while read -r k; do HAP_KW[$k]=1; done <"$TMP/hap_kws"

# A plausible expression for a keyword: its mandatory arguments, by type,
# unless the keyword wants something particular.
fetch_expr() {
	local kw=$1 args=$2 nmand=$3 out="" i=0 a v
	case $kw in
	bool) echo "bool(true)"; return ;;
	bin) echo "bin(0a0b)"; return ;;
	meth) echo "meth(GET)"; return ;;
	env) echo "env(HOME)"; return ;;
	ipv4) echo "ipv4(10.0.0.1)"; return ;;
	ipv6) echo "ipv6(::1)"; return ;;
	var) echo "var(txn.x)"; return ;;
	capture.req.hdr|capture.res.hdr) echo "$kw(0)"; return ;;
	req.payload) echo "req.payload(0,1)"; return ;;
	esac
	IFS=, read -ra list <<<"$args"
	for a in "${list[@]}"; do
		[ "$i" -lt "$nmand" ] || break
		case $a in
		ARGT_SINT) v=1 ;;
		ARGT_BE) v=be ;;
		ARGT_FE) v=fe ;;
		ARGT_SRV) v=be/s1 ;;
		ARGT_TAB) v=be ;;
		ARGT_IPV4|ARGT_MSK4) v=10.0.0.1 ;;
		ARGT_IPV6|ARGT_MSK6) v=::1 ;;
		ARGT_VAR) v=txn.x ;;
		*) v=x ;;
		esac
		out=${out:+$out,}$v
		i=$((i + 1))
	done
	if [ -n "$out" ]; then echo "$kw($out)"; else echo "$kw"; fi
}

# ---------------------------------------------------------------- places

# place name -> "mode|side|line". <side> says where the line goes: fe (the
# frontend), be (the backend) or li (a listen section replacing both); @@
# in the line stands for the expression.
PLACES=(
	"http-req.fe|http|fe|http-request set-header X %[@@]"
	"http-req.be|http|be|http-request set-header X %[@@]"
	"http-req.li|http|li|http-request set-header X %[@@]"
	"http-res.fe|http|fe|http-response set-header X %[@@]"
	"http-res.be|http|be|http-response set-header X %[@@]"
	"http-res.li|http|li|http-response set-header X %[@@]"
	"http-after.fe|http|fe|http-after-response set-header X %[@@]"
	"http-after.be|http|be|http-after-response set-header X %[@@]"
	"set-var.fe|http|fe|http-request set-var(txn.y) @@"
	"set-var.be|http|be|http-request set-var(txn.y) @@"
	"res-set-var.be|http|be|http-response set-var(txn.y) @@"
	"after-set-var.fe|http|fe|http-after-response set-var(txn.y) @@"
	"req-acl.fe|http|fe|http-request deny if { @@ -m found }"
	"req-acl.be|http|be|http-request deny if { @@ -m found }"
	"res-acl.fe|http|fe|http-response deny if { @@ -m found }"
	"res-acl.be|http|be|http-response deny if { @@ -m found }"
	"tcp-conn.fe|http|fe|tcp-request connection accept if { @@ -m found }"
	"tcp-sess.fe|http|fe|tcp-request session accept if { @@ -m found }"
	"tcp-conn-var.fe|http|fe|tcp-request connection set-var(sess.y) @@"
	"tcp-sess-var.fe|http|fe|tcp-request session set-var(sess.y) @@"
	"tcp-cont.fe.http|http|fe|tcp-request content accept if { @@ -m found }"
	"tcp-cont.be.http|http|be|tcp-request content accept if { @@ -m found }"
	"tcp-cont.fe.tcp|tcp|fe|tcp-request content accept if { @@ -m found }"
	"tcp-cont.be.tcp|tcp|be|tcp-request content accept if { @@ -m found }"
	"tcp-res.be.tcp|tcp|be|tcp-response content accept if { @@ -m found }"
	"tcp-res.be.http|http|be|tcp-response content accept if { @@ -m found }"
	"tcp-cont-var.fe.tcp|tcp|fe|tcp-request content set-var(txn.y) @@"
	"tcp-cont-var.be.tcp|tcp|be|tcp-request content set-var(txn.y) @@"
	"tcp-cont-var.li.tcp|tcp|li|tcp-request content set-var(txn.y) @@"
	"tcp-res-var.be.tcp|tcp|be|tcp-response content set-var(txn.y) @@"
	"log-format.fe|http|fe|log-format \"%[@@]\""
	"log-format.fe.tcp|tcp|fe|log-format \"%[@@]\""
	"unique-id.fe|http|fe|unique-id-format \"%[@@]\""
	"use_backend.fe|http|fe|use_backend %[@@]"
	"use_backend-acl.fe|http|fe|use_backend be if { @@ -m found }"
)

# Writes the configuration for <mode> with <line> on <side> into <file>.
write_cfg() {
	local mode=$1 side=$2 line=$3 file=$4 fe="" be="" li=""

	case $side in
	fe) fe=$line ;;
	be) be=$line ;;
	li) li=$line ;;
	esac
	{
		printf 'defaults\n  mode %s\n  timeout client 1s\n  timeout server 1s\n' "$mode"
		printf '  timeout connect 1s\n'
		# a log address, or HAProxy warns that a log-format is unused
		if [ "$side" = li ]; then
			printf 'listen li\n  bind 127.0.0.1:1\n  log 127.0.0.1:514 local0\n'
		else
			printf 'frontend fe\n  bind 127.0.0.1:1\n  log 127.0.0.1:514 local0\n'
		fi
		[ "$mode" = http ] && printf '  capture request header host len 8\n'
		[ "$mode" = http ] && printf '  capture response header server len 8\n'
		if [ "$side" = li ]; then
			printf '  %s\n  server s1 127.0.0.1:2\n' "$li"
			printf 'backend be\n  server s1 127.0.0.1:3\n'
		else
			[ -n "$fe" ] && printf '  %s\n' "$fe"
			printf '  default_backend be\n'
			printf 'backend be\n'
			[ -n "$be" ] && printf '  %s\n' "$be"
			printf '  server s1 127.0.0.1:2\n'
		fi
	} >"$file"
}

DIFFS=0
TRIED=0

# HAProxy's answer for <file>, from the cache when it was asked before
# (a valid configuration costs HAProxy a good fraction of a second).
haproxy_answer() {
	local key

	key=$(md5sum <"$1")
	key=$CACHE/${key%% *}
	if [ -f "$key" ]; then
		{ IFS= read -r CLS; IFS= read -r MSG; } <"$key"
		return
	fi
	probe_classify "$HAPROXY" "$1"
	printf '%s\n%s\n' "$CLS" "$MSG" >"$key.$$" && mv "$key.$$" "$key"
}

# Runs one case and prints it when the answers differ.
run_case() {
	local place=$1 mode=$2 side=$3 expr=$4 line=$5 h hmsg

	write_cfg "$mode" "$side" "$line" "$TMP/c.cfg"
	haproxy_answer "$TMP/c.cfg"
	h=$CLS hmsg=$MSG
	probe_classify "$SLUICE" "$TMP/c.cfg"
	TRIED=$((TRIED + 1))
	[ "$h" = "$CLS" ] && return
	DIFFS=$((DIFFS + 1))
	printf '%-18s %-28s haproxy %-4s sluice %-4s\n' "$place" "$expr" "$h" "$CLS"
	[ -n "$hmsg" ] && printf '    haproxy: %.220s\n' "${hmsg#"${hmsg%%[! ]*}"}"
	[ -n "$MSG" ] && printf '    sluice:  %.220s\n' "$MSG"
	if [ "$VERBOSE" = 1 ]; then
		sed 's/^/    | /' "$TMP/c.cfg"
	fi
}

# ---------------------------------------------------------------- report

echo "== keywords sluice knows and HAProxy 2.6 does not (not tried)"
comm -23 "$TMP/slu_kws" "$TMP/hap_kws" | tr '\n' ' '
echo
echo "== keywords HAProxy 2.6 knows and sluice does not (not tried)"
comm -13 "$TMP/slu_kws" "$TMP/hap_kws" >"$TMP/hap_only"
if [ "$VERBOSE" = 1 ]; then
	tr '\n' ' ' <"$TMP/hap_only"
	echo
else
	# grouped by family: ssl_fc_*, sc0_*, src_*... (-v lists them all)
	sed 's/^\(sc[0-9_]\|src_\|ssl_[a-z]*_\|bc_\|fc_\|internal\.\|[a-z]*\.\)[a-z0-9_.+]*$/\1*/' \
		"$TMP/hap_only" | sort | uniq -c | sort -rn |
		awk '{ printf "%s(%d) ", $2, $1 } END { print "" }'
fi

echo "== places where the answers differ (OK: valid; WARN: valid with a warning; ERR: refused)"
while IFS='|' read -r kw args nmand; do
	[[ $kw =~ ^($KW_RE)$ ]] || continue
	[ -n "${HAP_KW[$kw]-}" ] || continue
	expr=$(fetch_expr "$kw" "$args" "$nmand")
	for p in "${PLACES[@]}"; do
		IFS='|' read -r place mode side line <<<"$p"
		[[ $place =~ $PLACE_RE ]] || continue
		run_case "$place" "$mode" "$side" "$expr" "${line//@@/$expr}"
	done
done < <(sluice_fetches)

# Names of backends and servers: each side must refuse what does not
# exist. "fe" is a frontend, not a backend.
echo "== backend and server names"
for expr in nbsrv be_conn queue avg_queue connslots \
	    "nbsrv(nope)" "be_conn(nope)" "queue(nope)" "avg_queue(nope)" "connslots(nope)" \
	    "nbsrv(fe)" "be_conn(fe)" "nbsrv(be)" \
	    "srv_conn(be/s1)" "srv_conn(s1)" "srv_conn(be/nope)" "srv_conn(nope/s1)" \
	    "srv_queue(be/nope)" "srv_is_up(be/nope)" "srv_is_up(nope)" "srv_is_up(fe/s1)"; do
	kw=${expr%%(*}
	[[ $kw =~ ^($KW_RE)$ ]] || continue
	for p in "names.fe|http|fe|http-request set-header X %[@@]" \
		 "names.be|http|be|http-request set-header X %[@@]" \
		 "names.li|http|li|http-request set-header X %[@@]" \
		 "names.log|http|fe|log-format \"%[@@]\"" \
		 "names.acl.fe|http|fe|http-request deny if { @@ -m found }"; do
		IFS='|' read -r place mode side line <<<"$p"
		[[ $place =~ $PLACE_RE ]] || continue
		run_case "$place" "$mode" "$side" "$expr" "${line//@@/$expr}"
	done
done

echo "== $TRIED configurations, $DIFFS differences"
[ "$DIFFS" = 0 ]
