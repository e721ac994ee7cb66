#!/bin/sh
# deps.sh PKG...: install the Debian packages that are missing (as root), or say which are missing.
set -eu
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing (install them as root)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
apt-get install -y -q $missing >/dev/null 2>&1 || {
	apt-get update -q >/dev/null
	apt-get install -y -q $missing >/dev/null
}
