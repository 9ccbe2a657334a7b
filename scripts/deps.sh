#!/bin/sh
# Usage: deps.sh PKG... — installs the missing Debian packages when run as
# root, otherwise prints the exact apt-get line and fails.
missing=""
for p in "$@"; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$s" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "deps: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || exit 1
	apt-get install -y -qq --no-install-recommends $missing || exit 1
	# package scripts may start services we do not want running
	for svc in varnish haproxy nginx; do
		case "$missing" in *"$svc"*) (service "$svc" stop || true) >/dev/null 2>&1 ;; esac
	done
	exit 0
fi
echo "deps: missing Debian packages. Run as root:"
echo "    apt-get install -y$missing"
exit 1
