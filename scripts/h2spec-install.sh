#!/bin/sh
# Installs h2spec (the HTTP/2 conformance checker, a Go module) into
# tools/bin/ of this tree, unless it is there already. Called by `make deps`.
#
# It never fails the caller: without Go or without network, it prints why
# and exits 0, and writes the reason to tools/bin/h2spec.missing so that the
# tests that need h2spec can report themselves skipped with that reason.
#
# Versions are tried in order, the first that installs wins. v2.6.0 is the
# newest tag of the repository, but the Go module proxy refuses it (403,
# "This module version is not available"); the newest version it serves
# (`go list -m -versions github.com/summerwind/h2spec`) is
# v2.2.1+incompatible, which is what gets installed today. H2SPEC_VERSIONS overrides the list; GO names another go
# binary.
top=$(cd "$(dirname "$0")/.." && pwd)
versions=${H2SPEC_VERSIONS:-"v2.6.0 v2.2.1+incompatible"}
bin=$top/tools/bin
missing=$bin/h2spec.missing
mkdir -p "$bin"

if [ -x "$bin/h2spec" ]; then
	have=$(cat "$bin/h2spec.version" 2>/dev/null)
	for v in $versions; do
		[ "$v" = "$have" ] && exit 0
	done
fi

go=${GO:-}
if [ -z "$go" ]; then
	go=$(command -v go 2>/dev/null || true)
	[ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
fi
if [ -z "$go" ]; then
	echo "h2spec-install: no go toolchain (looked for \$GO, go in PATH, /usr/local/go/bin/go)" |
		tee "$missing"
	exit 0
fi

# Everything Go writes stays inside tools/ (module cache, build cache), so
# that a fresh CI machine needs neither a home directory nor a GOPATH, and
# a user's own Go settings do not leak in. GOFLAGS=-modcacherw lets
# `rm -rf tools` remove the module cache Go writes read-only.
work=$top/tools/go
mkdir -p "$work"
errors=""
for version in $versions; do
	echo "h2spec-install: go install github.com/summerwind/h2spec/cmd/h2spec@$version"
	# timeout: an unreachable proxy must not hang `make deps`
	if out=$(env GOPATH="$work/path" GOMODCACHE="$work/path/pkg/mod" \
		GOCACHE="$work/cache" GOBIN="$bin" GOFLAGS=-modcacherw \
		GO111MODULE=on GOTOOLCHAIN=local CGO_ENABLED=0 \
		timeout 600 "$go" install "github.com/summerwind/h2spec/cmd/h2spec@$version" 2>&1); then
		echo "$version" >"$bin/h2spec.version"
		rm -f "$missing"
		echo "h2spec-install: installed $bin/h2spec ($version)"
		exit 0
	fi
	echo "$out" | tail -n 3 | sed 's/^/    /'
	errors="$errors
@$version: $(echo "$out" | tail -n 3)"
done
{
	echo "h2spec-install: could not install h2spec ($versions); last errors:$errors"
} >"$missing"
echo "h2spec-install: h2spec not installed; tests that need it will be skipped"
exit 0
