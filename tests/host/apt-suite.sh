#!/bin/bash
# apt-suite.sh: guest/apt-suite.sh finds the host's Debian archive in sources files of both
# formats (one-line and deb822), skips other releases, other archives and disabled entries, and
# says so when there is none. TAP.
cd "$(dirname "$0")/../.." || exit 1
rel=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
check() { # check EXPECTED CASE: run apt-suite.sh --uri on $tmp/etc without indextargets
	local got
	got=$(APT_ETC=$tmp/etc APT_INDEXTARGETS=0 guest/apt-suite.sh --uri 2>/dev/null)
	n=$((n + 1))
	if [ "$got" = "$1" ]; then echo "ok $n - $2"; else echo "not ok $n - $2 (got '$got', want '$1')"; failed=1; fi
}
fresh() { rm -rf "${tmp:?}/etc" && mkdir -p "$tmp/etc/sources.list.d"; }

fresh
printf '# deb http://old.example/debian %s main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.example/debian %s main contrib\n' "$rel" "$rel" >"$tmp/etc/sources.list"
check http://one.example/debian "one-line sources.list, options in brackets, comment skipped"
fresh
printf 'deb http://sec.example/debian-security %s-security main\ndeb http://two.example/debian %s main\n' "$rel" "$rel" >"$tmp/etc/sources.list.d/x.list"
check http://two.example/debian "one-line .list: the release's entry, not -security"
fresh
printf 'Types: deb\nURIs: http://sec.example/debian-security\nSuites: %s-security\nComponents: main\n\nTypes: deb deb-src\n# a comment\nURIs: http://three.example/debian\nSuites: %s %s-updates\nComponents: main\nSigned-By: /k.gpg\n' "$rel" "$rel" "$rel" >"$tmp/etc/sources.list.d/debian.sources"
check http://three.example/debian "deb822 .sources: second stanza, several suites"
fresh
printf 'Types: deb\nURIs: http://nomain.example/debian\nSuites: %s\nComponents: contrib\n' "$rel" >"$tmp/etc/sources.list.d/a.sources"
printf 'deb http://four.example/debian %s main\n' "$rel" >"$tmp/etc/sources.list.d/b.list.disabled"
check "" "no main component and a disabled file: nothing found"
fresh
n=$((n + 1))
if APT_ETC=$tmp/etc APT_INDEXTARGETS=0 guest/apt-suite.sh --uri >/dev/null 2>"$tmp/err" || ! grep -q "no Debian archive" "$tmp/err"; then
	echo "not ok $n - empty configuration: a one-line error and a failure"
	failed=1
else
	echo "ok $n - empty configuration: a one-line error and a failure"
fi
n=$((n + 1))
if [ -n "$(guest/apt-suite.sh --uri)" ]; then echo "ok $n - the host's own configuration names an archive"; else echo "not ok $n - the host's own configuration names an archive"; failed=1; fi
echo "1..$n"
exit $failed
