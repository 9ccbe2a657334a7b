#!/bin/sh
# Runs every unit test binary and every regression test, then prints the
# closing line "N passed, N failed". Exit status is non-zero on any failure.
# REGTESTS may name a subset of .vtc files; VTC_JOBS sets varnishtest -j.
# With SAN=1 (a sanitizer build), any sanitizer report is a failure.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
passed=0
failed=0
failures=""

# Sanitizer build: every report (LeakSanitizer's at exit included) is
# written to a file of $san_dir instead of stderr, so that none is lost in
# a log that nobody reads, whatever the test did with the process's exit
# status. A leak also makes the process exit 23: varnishtest, which expects
# sluice to die from SIGINT (or -c to exit 0 or 1), fails the test too.
# Nothing is suppressed, OpenSSL's allocations included: an OpenSSL object
# that sluice loses is sluice's leak. libcrypto has no frame pointers, so
# the default stacks stop in it: ASAN_OPTIONS=fast_unwind_on_malloc=0 in
# the environment (appended to the options set below) follows them on into
# sluice's frames.
san=${SAN:-0}
ldd "$top/sluice" 2>/dev/null | grep -q libasan && san=1
san_dir=""
if [ "$san" = 1 ]; then
	san_dir=$(mktemp -d)
	export ASAN_OPTIONS="detect_leaks=1:exitcode=23:log_path=$san_dir/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	export UBSAN_OPTIONS="print_stacktrace=1:log_path=$san_dir/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
fi

for t in tests/unit/bin/test_*; do
	[ -x "$t" ] || continue
	if timeout 300 "$t" >/tmp/sluice-unit.$$ 2>&1; then
		passed=$((passed + 1))
		tail -n 1 /tmp/sluice-unit.$$
	else
		failed=$((failed + 1))
		failures="$failures $t"
		cat /tmp/sluice-unit.$$
	fi
done
rm -f /tmp/sluice-unit.$$

# fuzz targets: replay every seed corpus, then a short fuzzing run each
# (the plain build only: the fuzzers carry their own sanitizers)
if [ "$san" != 1 ] && [ -z "${NO_FUZZ:-}" ] && command -v clang >/dev/null; then
	echo "fuzz: building and running every target for ${FUZZ_SECONDS:-5} s"
	if make --no-print-directory -s -f fuzz/Makefile check FUZZ_SECONDS="${FUZZ_SECONDS:-5}" \
	        >/tmp/sluice-fuzz.$$ 2>&1; then
		passed=$((passed + 1))
		grep -E '^== |Done [0-9]+ runs' /tmp/sluice-fuzz.$$
	else
		failed=$((failed + 1))
		failures="$failures fuzz"
		tail -n 40 /tmp/sluice-fuzz.$$
	fi
	rm -f /tmp/sluice-fuzz.$$
fi

# stress tests: bounded loopback load, one test each
for t in tests/stress/test_*.sh; do
	[ -f "$t" ] || continue
	[ -n "${NO_STRESS:-}" ] && break
	echo "stress: $t"
	if timeout 600 sh "$t"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures="$failures $t"
	fi
done

# The statistics page in headless Chromium (installed by `make deps`):
# loaded, its admin form used, a screenshot taken. Skipped, with the
# reason, when Chromium or ChromeDriver is missing.
e2eskip=0
if [ -z "${NO_E2E:-}" ]; then
	sh tests/e2e/stats_page.sh >/tmp/sluice-e2e.$$ 2>&1
	r=$?
	if [ $r -eq 77 ]; then
		cat /tmp/sluice-e2e.$$
		e2eskip=1
	elif [ $r -eq 0 ]; then
		echo "e2e: tests/e2e/stats_page.sh: $(grep -c '^ok:' /tmp/sluice-e2e.$$) checks passed"
		passed=$((passed + 1))
	else
		cat /tmp/sluice-e2e.$$
		failed=$((failed + 1))
		failures="$failures e2e"
	fi
	rm -f /tmp/sluice-e2e.$$
fi

# HTTP/2 conformance: h2spec (installed by `make deps`) against an h2c and a
# TLS listener. Skipped, with the reason, until sluice accepts HTTP/2
# listeners, or when h2spec could not be installed.
h2skip=0
if [ -z "${NO_H2SPEC:-}" ]; then
	if ! "$top/sluice" -c -f reg-tests/h2/probe.cfg >/dev/null 2>&1; then
		echo "h2spec: skipped: sluice refuses HTTP/2 listeners (reg-tests/h2/probe.cfg)"
		h2skip=1
	else
		sh tests/compat/h2spec-proxy.sh "$top/sluice" >/tmp/sluice-h2spec.$$ 2>&1
		r=$?
		if [ $r -eq 77 ]; then
			cat /tmp/sluice-h2spec.$$
			h2skip=1
		elif [ $r -eq 0 ]; then
			grep -E '^(== |h2spec)' /tmp/sluice-h2spec.$$
			passed=$((passed + 1))
		else
			grep -E '^(== |h2spec|FAIL|    )' /tmp/sluice-h2spec.$$ | head -n 80
			failed=$((failed + 1))
			failures="$failures h2spec"
		fi
		rm -f /tmp/sluice-h2spec.$$
	fi
fi
[ $((h2skip + e2eskip)) -gt 0 ] && skipped=$((h2skip + e2eskip))

vtcs=${REGTESTS:-$(find reg-tests -name '*.vtc' | sort)}
if [ -n "$vtcs" ]; then
	out=$(mktemp)
	HAPROXY_PROGRAM="$top/sluice" varnishtest -j "${VTC_JOBS:-2}" -k -t 30 $vtcs >"$out" 2>&1
	p=$(grep -c '^#    top  TEST .* passed' "$out")
	s=$(grep -c '^#    top  TEST .* skipped' "$out")
	f=$(grep -c '^#    top  TEST .* FAILED' "$out")
	grep -E '^#    top  TEST .* (FAILED|skipped)' "$out"
	# a failed test's log is printed whole by varnishtest: keep the tail
	[ "$f" -gt 0 ] && grep -E '^(---|\*\*\*\*|\*\*\*|\*\*) ' "$out" | grep -vE 'debug\|' | tail -n 60
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((s + h2skip + e2eskip))
	rm -f "$out"
fi

if [ -n "$san_dir" ]; then
	if [ -n "$(ls "$san_dir")" ]; then
		failed=$((failed + 1))
		failures="$failures sanitizer"
		for f in "$san_dir"/*; do
			echo "== sanitizer report $f"
			head -n 40 "$f"
		done
	fi
	rm -rf "$san_dir"
fi

[ -n "$failures" ] && echo "failed (besides regression tests):$failures"
echo "${passed} passed, ${failed} failed${skipped:+, ${skipped} skipped}"
[ "$failed" -eq 0 ]
