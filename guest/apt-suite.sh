#!/bin/sh
# apt-suite.sh: a private apt configuration for one suite of the host's own Debian archive.
#
#   guest/apt-suite.sh SUITE APTDIR   write APTDIR/sources.list for SUITE (main), run `apt-get update`
#                                     into APTDIR/lists once, print the apt options that use them
#   guest/apt-suite.sh --uri          print the archive URI only
#
# The archive is the one the host's apt already uses for its own release (no host name is written
# anywhere): `apt-get indextargets` names it; when that gives nothing, /etc/apt/sources.list and
# sources.list.d/*.list (one-line format) and sources.list.d/*.sources (deb822) are read.
# APT_ETC (default /etc/apt) and APT_INDEXTARGETS=0 exist for tests/host/apt-suite.sh.
set -eu
etc=${APT_ETC:-/etc/apt}
# shellcheck disable=SC1091 # the host's own file
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")

# from_indextargets: the Repo-URI of the host release's main "deb" index.
from_indextargets() {
	[ "${APT_INDEXTARGETS:-1}" = 1 ] || return 0
	# shellcheck disable=SC2016 # apt expands $(FIELD), not the shell
	apt-get indextargets --format '$(TARGET_OF) $(RELEASE) $(COMPONENT) $(REPO_URI)' 2>/dev/null |
		awk -v r="$release" '$1 == "deb" && $2 == r && $3 == "main" { print $4; exit }'
}

# from_files: the same from the sources files, both formats; options in [...] are skipped.
from_files() {
	for f in "$etc/sources.list" "$etc"/sources.list.d/*.list; do
		[ -f "$f" ] && sed 's/\[[^]]*\]//' "$f"
	done | awk -v r="$release" '$1 == "deb" && $3 == r { for (i = 4; i <= NF; i++) if ($i == "main") { print $2; exit } }'
	for f in "$etc"/sources.list.d/*.sources; do
		[ -f "$f" ] && cat "$f" && echo
	done | awk -v r="$release" '
		function flush() { if (deb && hasr && main && uri != "") { print uri; done = 1 } deb = hasr = main = 0; uri = "" }
		/^[ \t]*$/ { if (!done) flush(); next }
		/^[ \t]*#/ { next }
		tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
		tolower($1) == "uris:" { uri = $2 }
		tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == r) hasr = 1 }
		tolower($1) == "components:" { for (i = 2; i <= NF; i++) if ($i == "main") main = 1 }
		END { if (!done) flush() }' | head -n1
}

uri=$(from_indextargets)
[ -n "$uri" ] || uri=$(from_files)
[ -n "$uri" ] || { echo "apt-suite: no Debian archive for $release in the host's apt sources" >&2; exit 1; }
if [ "${1:-}" = --uri ]; then
	echo "$uri"
	exit 0
fi
suite=$1
aptdir=$2
mkdir -p "$aptdir/lists/partial"
echo "deb $uri $suite main" >"$aptdir/sources.list.new"
if ! cmp -s "$aptdir/sources.list.new" "$aptdir/sources.list" 2>/dev/null; then
	mv "$aptdir/sources.list.new" "$aptdir/sources.list"
	rm -f "$aptdir/updated"
else
	rm -f "$aptdir/sources.list.new"
fi
mkdir -p "$aptdir/cache/archives/partial"
# Its own package cache too: the host's /var/cache/apt is never rebuilt from these lists.
opts="-o Dir::Etc::sourcelist=$aptdir/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$aptdir/lists -o Dir::Cache=$aptdir/cache"
if [ ! -f "$aptdir/updated" ]; then
	# shellcheck disable=SC2086
	apt-get -q $opts update >/dev/null
	touch "$aptdir/updated"
fi
echo "$opts"
