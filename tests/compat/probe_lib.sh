# probe_lib.sh: what the compatibility matrices (fetch_matrix.sh,
# keyword_matrix.sh) share: asking a program whether a configuration is
# valid, and sorting its answer. Sourced by bash scripts.

# probe_need_exec NAME PROG...: exits 2 unless every PROG is executable.
probe_need_exec() {
	local name=$1 p

	shift
	for p in "$@"; do
		[ -x "$p" ] || { echo "$name: $p is not executable" >&2; exit 2; }
	done
}

# probe_classify PROG FILE: runs `PROG -c -f FILE` and sets
#   CLS    OK (valid, no warning), WARN (valid, with a warning), ERR
#          (refused, exit code 1) or "?rc" (a crash, another exit code)
#   MSG    the first alert or warning line, without the pid HAProxy prints
#          and with the file name replaced by "cfg"
#   WARNS  every warning line, one a line
# The output goes to $PROBE_OUT (default $TMP/out). With $PROBE_TIMEOUT
# (seconds), a program still checking after that long is stopped ("?124").
# Bash builtins only, but for timeout(1): the matrices run this thousands
# of times.
probe_classify() {
	local prog=$1 file=$2 rc line warn=0 out=${PROBE_OUT:-$TMP/out}

	if [ -n "${PROBE_TIMEOUT-}" ]; then
		timeout -k 1 "$PROBE_TIMEOUT" "$prog" -c -f "$file" >"$out" 2>&1
	else
		"$prog" -c -f "$file" >"$out" 2>&1
	fi
	rc=$?
	MSG="" WARNS=""
	while IFS= read -r line; do
		case $line in
		*"Error(s) found"*|*"Fatal errors"*) ;;
		*"[WARNING]"*) warn=1; [ -n "$MSG" ] || MSG=$line
			WARNS+=$line$'\n' ;;
		*"[ALERT]"*) [ -n "$MSG" ] || MSG=$line ;;
		esac
	done <"$out"
	[[ $MSG =~ ^(.*)\([0-9]+\)\ :\ (.*)$ ]] && MSG="${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
	MSG=${MSG//$file/cfg}
	case $rc in
	0) if [ $warn = 1 ]; then CLS=WARN; else CLS=OK; fi ;;
	1) CLS=ERR ;;
	*) CLS="?$rc" ;;
	esac
}
