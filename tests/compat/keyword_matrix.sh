#!/bin/sh
# keyword_matrix.sh: how much of HAProxy 2.6's configuration language does
# sluice accept? (issue 17)
#
# The keywords come from HAProxy 2.6's manual, per category: global, proxy
# (the 4.1 matrix), bind and server options, the actions of each rule set,
# sample fetches, converters, sections, and the CLI commands (listed, not
# probed: a probe only runs `-c`). keyword_matrix/extract.py writes them
# into keyword_matrix/keywords.txt. For each keyword, keyword_matrix/
# probes.py writes a few candidate configurations that place it where the
# manual says it is valid, with plausible arguments; HAProxy's verdict is
# the first candidate it accepts (OK, or WARN when it only accepts with a
# warning), kept in keyword_matrix/haproxy.txt; sluice is asked about that
# candidate. Addresses are loopback ones and nothing is started.
#
# Prints, per category, how many keywords sluice accepts among those HAProxy
# accepts, the differences both ways, and the keywords sluice accepts with a
# warning that it ignores them or does not implement them where HAProxy says
# nothing ("accepted but ignored"; they count as accepted).
#
# A tool, not a test (`make test` does not run it). Without --refresh it
# needs neither HAProxy nor its manual and takes a few seconds; --refresh
# takes a few minutes on two cores. haproxy.txt names each probe by its
# rank among the candidates: after a change to probes.py or keywords.txt,
# run --refresh (the script warns when they changed).
#
# Usage: sh tests/compat/keyword_matrix.sh [--refresh] [-c REGEX] [-v]
#   --refresh  extract the keywords again from the manual (when haproxy-doc
#              is installed) and ask HAProxy again
#   -c REGEX   only the categories matching REGEX (grep -E, anchored)
#   -v         print the configuration of each difference
# Environment: SLUICE (default ./sluice), HAPROXY (default /usr/sbin/haproxy),
#   HAPROXY_DOC (default /usr/share/doc/haproxy)

[ -n "${BASH_VERSION-}" ] || exec bash "$0" "$@"
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/compat/probe_lib.sh
# a probe naming a file HAProxy reads forever must not stop the run
PROBE_TIMEOUT=${PROBE_TIMEOUT:-5}

SLUICE=${SLUICE:-./sluice}
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
HAPROXY_DOC=${HAPROXY_DOC:-/usr/share/doc/haproxy}
DIR=tests/compat/keyword_matrix
KEYWORDS=$DIR/keywords.txt
VERDICTS=$DIR/haproxy.txt

# Worker mode, for xargs: HAProxy's verdict on keyword <n>, trying its
# candidates in order; prints "category TAB keyword TAB verdict TAB
# candidate TAB message". The first OK wins; else the first WARN; else ERR
# with the first candidate's message.
if [ "${1-}" = --haproxy-verdict ]; then
	TMP=$2 n=$3 cat=$4 kw=$5 ncand=$6
	PROBE_OUT=$TMP/out.$n
	best=ERR bidx=0 bmsg=""
	for ((i = 0; i < ncand; i++)); do
		probe_classify "$HAPROXY" "$TMP/$n.$i.cfg"
		# exit code 2: valid, but nothing would listen (`disabled`)
		[ "$CLS" = "?2" ] && grep -q 'has no error' "$PROBE_OUT" && CLS=OK
		[ "$i" = 0 ] && bmsg=$MSG
		if [ "$CLS" = OK ]; then
			best=OK bidx=$i bmsg=""
			break
		fi
		if [ "$CLS" = WARN ] && [ "$best" = ERR ]; then
			best=WARN bidx=$i bmsg=$MSG
		fi
	done
	rm -f "$PROBE_OUT"
	bmsg=${bmsg//$TMP/<tmp>} bmsg=${bmsg//$PWD/<tree>}
	printf '%s\t%s\t%s\t%s\t%.200s\n' "$cat" "$kw" "$best" "$bidx" "$bmsg"
	exit 0
fi

REFRESH=0
CAT_RE='.*'
VERBOSE=0
while [ $# -gt 0 ]; do
	case $1 in
	--refresh) REFRESH=1 ;;
	-c) CAT_RE=$2; shift ;;
	-v) VERBOSE=1 ;;
	*) sed -n 's/^# \{0,1\}//; /^Usage/,/^Environment/p' "$0"; exit 2 ;;
	esac
	shift
done

probe_need_exec keyword_matrix "$SLUICE"
TMP=$(mktemp -d /tmp/keyword_matrix.XXXXXX) || exit 2
trap 'rm -rf "$TMP"' EXIT

if [ "$REFRESH" = 1 ]; then
	probe_need_exec keyword_matrix "$HAPROXY"
	if [ -e "$HAPROXY_DOC/configuration.txt.gz" ] ||
	   [ -e "$HAPROXY_DOC/configuration.txt" ]; then
		python3 $DIR/extract.py "$HAPROXY_DOC" >"$TMP/kw" &&
			mv "$TMP/kw" "$KEYWORDS" || exit 2
	else
		echo "keyword_matrix: no manual under $HAPROXY_DOC, keeping $KEYWORDS" >&2
	fi
fi
python3 $DIR/probes.py "$KEYWORDS" "$TMP" "$PWD" >"$TMP/index" || exit 2

# The verdicts name a candidate by its rank: they hold for the probes and
# keywords they were made from.
probes_sum() {
	cat $DIR/probes.py "$KEYWORDS" | cksum | cut -d' ' -f1
}
if [ "$REFRESH" = 0 ] && [ -s "$VERDICTS" ] &&
   ! grep -qx "# probes $(probes_sum)" "$VERDICTS"; then
	echo "keyword_matrix: probes.py or keywords.txt changed since $VERDICTS was made: run with --refresh" >&2
fi
if [ "$REFRESH" = 1 ] || [ ! -s "$VERDICTS" ]; then
	probe_need_exec keyword_matrix "$HAPROXY"
	echo "== asking $("$HAPROXY" -v | head -1)" >&2
	{
		echo "# HAProxy's verdicts on the probes of keywords.txt (keyword_matrix.sh --refresh)"
		echo "# $("$HAPROXY" -v | head -1)"
		echo "# probes $(probes_sum)"
		echo "# category	keyword	verdict (OK, WARN, ERR)	candidate	first message"
		awk -F'\t' -v t="$TMP" '$4 > 0 { print "--haproxy-verdict", t, $1, $2, $3, $4 }' \
			OFS='\n' "$TMP/index" | tr '\n' '\0' |
			xargs -0 -n 6 -P 2 bash "$0" | sort -t"$(printf '\t')" -k1,1 -k2,2
	} >"$TMP/verdicts" && mv "$TMP/verdicts" "$VERDICTS" || exit 2
fi

# ---------------------------------------------------------------- sluice

# One line per probed keyword: category, keyword, HAProxy's verdict,
# sluice's (OK, WARN, IGN: a warning that says "ignored" or "not
# implemented", ERR), sluice's message, the probe.
# what sluice says when it accepts a keyword and does nothing with it
IGNORED_RE='(ignor|not implemented|not supported|has no effect|not run)'
declare -A NUM
while IFS=$'\t' read -r n cat kw ncand; do
	NUM[$cat $kw]=$n
done <"$TMP/index"
while IFS=$'\t' read -r cat kw hv idx hmsg; do
	case $cat in '#'*) continue ;; esac
	[[ $cat =~ ^($CAT_RE)$ ]] || continue
	n=${NUM[$cat $kw]-}
	[ -n "$n" ] || continue
	cfg=$TMP/$n.$idx.cfg
	probe_classify "$SLUICE" "$cfg"
	if [ "$CLS" = WARN ] && [ "$hv" = OK ] &&
	   [[ $WARNS =~ $IGNORED_RE ]]; then
		CLS=IGN
		[[ $WARNS =~ [^$'\n']*$IGNORED_RE[^$'\n']* ]] &&
			MSG=${BASH_REMATCH[0]//$cfg/cfg}
	fi
	MSG=${MSG//$TMP/<tmp>} MSG=${MSG//$PWD/<tree>}
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$cat" "$kw" "$hv" "$CLS" "$MSG" "$cfg"
done <"$VERDICTS" >"$TMP/results"

# ---------------------------------------------------------------- report

ORDER="global proxy bind server http-request http-response http-after-response
tcp-request-connection tcp-request-session tcp-request-content
tcp-response-content fetch converter section"

echo "== coverage: keywords sluice accepts among those HAProxy 2.6 accepts"
printf '%-24s %9s %6s %8s %9s\n' category accepted '%' ignored "haproxy-no"
for c in $ORDER; do
	awk -F'\t' -v c="$c" '$1 == c {
		if ($3 == "ERR") { hno++; next }
		m++
		if ($4 != "ERR" && $4 !~ /^\?/) n++
		if ($4 == "IGN") ign++
	} END {
		if (m + hno == 0) exit
		printf "%-24s %4d/%-4d %5.1f%% %8d %9d\n", c, n, m,
		       m ? 100 * n / m : 0, ign, hno
	}' "$TMP/results"
done
awk -F'\t' '$3 != "ERR" { m++; if ($4 != "ERR" && $4 !~ /^\?/) n++; if ($4 == "IGN") ign++ }
	END { if (m) printf "%-24s %4d/%-4d %5.1f%% %8d\n", "all", n, m, 100 * n / m, ign }' \
	"$TMP/results"
echo "(ignored: accepted with a warning that the keyword is ignored or not"
echo " implemented, counted as accepted; haproxy-no: no probe HAProxy accepts,"
echo " not counted: a module HAProxy is built without, or a probe too simple)"

echo
echo "== HAProxy accepts, sluice refuses"
for c in $ORDER; do
	awk -F'\t' -v c="$c" '$1 == c && $3 != "ERR" && ($4 == "ERR" || $4 ~ /^\?/) { printf "%s%s", k++ ? ", " : "", $2 }
		END { if (k) printf "\n" }' "$TMP/results" | fold -s -w 76 |
		sed "1s/^/$c: /; 2,\$s/^/    /"
done
if [ "$VERBOSE" = 1 ]; then
	awk -F'\t' '$3 != "ERR" && ($4 == "ERR" || $4 ~ /^\?/) { print $1 "\t" $2 "\t" $5 "\t" $6 }' \
		"$TMP/results" | while IFS=$'\t' read -r c kw msg cfg; do
		printf '%s %s\n    sluice: %.200s\n' "$c" "$kw" "$msg"
		grep -v '^  timeout\|^defaults\|^  mode\|^global$' "$cfg" | sed 's/^/    | /'
	done
fi

echo
echo "== sluice accepts, HAProxy refuses every probe"
awk -F'\t' '$3 == "ERR" && $4 != "ERR" && $4 !~ /^\?/ { printf "%s %s (%s)\n", $1, $2, $4 }' \
	"$TMP/results"

echo
echo "== accepted but ignored (sluice warns, HAProxy does not)"
awk -F'\t' '$4 == "IGN" { sub(/^.*\[WARNING\] *(cfg:[0-9]+: *)?/, "", $5)
	printf "%-22s %-28s %.110s\n", $1, $2, $5 }' "$TMP/results"

echo
echo "== other warnings of sluice where HAProxy has none"
awk -F'\t' '$3 == "OK" && $4 == "WARN" { sub(/^.*\[WARNING\] *(cfg:[0-9]+: *)?/, "", $5)
	printf "%-22s %-28s %.110s\n", $1, $2, $5 }' "$TMP/results"

if [[ cli =~ ^($CAT_RE)$ ]]; then
	# CLI commands cannot be probed with -c: compared with the words of
	# sluice's CLI tables instead.
	echo
	echo "== CLI commands (not probed: compared with sluice's CLI tables)"
	sed -n 's/.*{ *{ *\("[^}]*"\) *}, *CLI_LEVEL.*/\1/p' src/*/*.c |
		tr -d '",' | sort -u >"$TMP/cli"
	awk -F'\t' '$1 == "cli" { print $2 }' "$KEYWORDS" | sort -u >"$TMP/cli_hap"
	have=0 total=0 missing=""
	while read -r cmd; do
		total=$((total + 1))
		found=0
		while read -r s; do
			case "$cmd " in "$s "*) found=1; break ;; esac
		done <"$TMP/cli"
		if [ $found = 1 ]; then have=$((have + 1)); else missing+="$cmd, "; fi
	done <"$TMP/cli_hap"
	echo "cli: $have/$total commands of management.txt 9.3 have an entry in sluice"
	echo "missing: ${missing%, }" | fold -s -w 76 | sed '2,$s/^/    /'
fi
