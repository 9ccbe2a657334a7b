#!/bin/sh
# Usage: h2spec.sh HOST PORT [--tls] [h2spec options...]
#
# Runs h2spec (HTTP/2 conformance, RFC 7540 and RFC 7541 HPACK: 145 cases)
# against an HTTP/2 listener: h2c by prior knowledge by default (a `bind ...
# proto h2` line), or ALPN h2 over TLS with --tls (certificate not verified).
# Prints one line per section with its pass/fail count, the failed cases
# with what h2spec expected and got, and a summary line:
#   h2spec: 145 cases, 145 passed, 0 failed, 0 skipped
# Exit status: 0 when every case passed, 1 on any failure (or when h2spec
# could not reach the listener), 77 when h2spec is not installed (the
# reason is printed; `make deps` installs it, see scripts/h2spec-install.sh).
# H2SPEC names another h2spec binary; H2SPEC_TIMEOUT is the per-case
# timeout in seconds (h2spec -o, default 5: a loaded machine, the
# sanitizer build, may take more than h2spec's own 2 s on a case).
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || { sed -n '2,3p' "$0" | sed 's/^# //'; exit 2; }
host=$1 port=$2
shift 2
tls=""
if [ "${1:-}" = "--tls" ]; then
	tls="-t -k"
	shift
fi

h2spec=${H2SPEC:-}
[ -z "$h2spec" ] && [ -x "$top/tools/bin/h2spec" ] && h2spec=$top/tools/bin/h2spec
[ -z "$h2spec" ] && h2spec=$(command -v h2spec 2>/dev/null)
if [ -z "$h2spec" ]; then
	echo "h2spec: skipped: h2spec is not installed"
	[ -f "$top/tools/bin/h2spec.missing" ] && sed 's/^/    /' "$top/tools/bin/h2spec.missing"
	echo "    (make deps, or sh scripts/h2spec-install.sh, installs it into tools/bin/)"
	exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086 # $tls is two words or none
"$h2spec" -h "$host" -p "$port" $tls -o "${H2SPEC_TIMEOUT:-5}" \
	-j "$work/report.xml" "$@" >"$work/out" 2>&1
rc=$?

# The JUnit report has one <testsuite> per section and a <failure> or
# <skipped> element in each case that did not pass.
python3 - "$work/report.xml" "$rc" "$work/out" <<'PY'
import sys, xml.etree.ElementTree as ET
path, rc, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    root = ET.parse(path).getroot()
except (OSError, ET.ParseError) as e:
    print("h2spec: no report (%s); its output ends with:" % e)
    lines = open(out, errors="replace").read().splitlines()
    for l in lines[-10:]:
        print("    " + l.strip())
    sys.exit(1)
total = passed = failed = skipped = 0
failures = []
for suite in root.iter("testsuite"):
    sp = sf = ss = 0
    for case in suite.iter("testcase"):
        fail = case.find("failure")
        if fail is None:
            fail = case.find("error")
        if fail is not None:
            sf += 1
            text = (fail.text or fail.get("message") or "").strip()
            failures.append((suite.get("package"), suite.get("name"),
                             case.get("classname"), text))
        elif case.find("skipped") is not None:
            ss += 1
        else:
            sp += 1
    n = sp + sf + ss
    total += n; passed += sp; failed += sf; skipped += ss
    verdict = "FAIL" if sf else "ok"
    print("%-4s %-14s %-44s %3d/%-3d%s" % (
        verdict, suite.get("package"), suite.get("name")[:44], sp, n,
        (" (%d skipped)" % ss) if ss else ""))
for pkg, sname, cname, text in failures:
    print("FAILED %s %s: %s" % (pkg, sname, cname))
    for l in text.splitlines():
        print("    " + l.strip())
print("h2spec: %d cases, %d passed, %d failed, %d skipped"
      % (total, passed, failed, skipped))
# h2spec aborts the run when the listener goes away; the report then
# lacks the cases that were not run, and its own status says so.
if rc != 0 and failed == 0:
    print("h2spec: exited with status %d (run aborted?); its output ends with:" % rc)
    for l in open(out, errors="replace").read().splitlines()[-5:]:
        print("    " + l.strip())
    sys.exit(1)
sys.exit(1 if failed else 0)
PY
