#!/bin/sh
# Runs every unit test binary and every regression test, then prints the
# closing line "N passed, N failed". Exit status is non-zero on any failure.
# REGTESTS may name a subset of .vtc files; VTC_JOBS sets varnishtest -j.
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
passed=0
failed=0
failures=""

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
if [ "${SAN:-0}" != 1 ] && [ -z "${NO_FUZZ:-}" ] && command -v clang >/dev/null; then
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
	skipped=$s
	rm -f "$out"
fi

[ -n "$failures" ] && echo "failed unit tests:$failures"
echo "${passed} passed, ${failed} failed${skipped:+, ${skipped} skipped}"
[ "$failed" -eq 0 ]
