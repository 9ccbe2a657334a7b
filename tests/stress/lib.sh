# Shared by the stress tests (sourced, not run): paths, a scratch
# directory removed at exit with every process listed in $pids, failure
# bookkeeping, free loopback ports, the stats socket, and the test helpers
# built from tests/stress/*.c on demand.
set -u
# a script outside tests/stress (bench/) sets top itself
top=${top:-$(cd "$(dirname "$0")/../.." && pwd)}
src=$top/tests/stress
bin=$src/bin
sluice=${SLUICE:-$top/sluice}
work=$(mktemp -d)
pids=""
fail=0
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT
bad() { echo "FAIL: $*"; fail=1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cli() { echo "$1" | socat -t 5 - "UNIX-CONNECT:$work/stats.sock"; }

# Builds the named helpers (httporigin, httpload) if missing or older than
# their sources, through a temporary name so that two runs never execute a
# half-written binary.
build_helpers() {
	mkdir -p "$bin"
	for prog in "$@"; do
		if [ ! -x "$bin/$prog" ] || [ "$src/$prog.c" -nt "$bin/$prog" ] ||
		   [ "$src/httpgen.h" -nt "$bin/$prog" ]; then
			${CC:-cc} -O2 -g -std=gnu11 -Wall -Wextra -Werror -o "$bin/$prog.$$" "$src/$prog.c" &&
				mv -f "$bin/$prog.$$" "$bin/$prog" ||
				{ echo "FAIL: cannot build $prog"; exit 1; }
		fi
	done
}

# Starts sluice on $work/cfg (sl_pid), after removing a stats socket left by
# an earlier run, and waits (bounded) until its stats socket answers: then
# every listener is bound and the threads run (the socket file alone may
# exist a moment before the frontends are bound). A sanitizer build on a
# loaded machine may take seconds to get there.
start_sluice() {
	rm -f "$work/stats.sock"
	"$sluice" -d -f "$work/cfg" >"$work/sluice.log" 2>&1 &
	sl_pid=$!; pids="$pids $sl_pid"
	i=0
	until cli "show info" 2>/dev/null | grep -q '^CurrConns:'; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "FAIL: sluice did not start"; cat "$work/sluice.log"; exit 1; }
		sleep 0.1
	done
}

# Waits (bounded) until sluice counts no connection.
wait_no_conn() {
	i=0
	while [ "$(cli "show info" | sed -n 's/^CurrConns: //p')" != 0 ] && [ $i -lt 100 ]; do
		i=$((i + 1)); sleep 0.1
	done
}
