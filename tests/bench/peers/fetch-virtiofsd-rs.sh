#!/bin/sh
# fetch-virtiofsd-rs.sh OUTDIR: the Rust virtiofsd from Debian, unpacked under OUTDIR, never installed.
#
# Debian 12 has only the C virtiofsd (QEMU 7.2); the Rust one is packaged in bookworm-backports in
# some snapshots and in trixie. The first suite of the host's archive that has it is used
# (guest/apt-suite.sh: private sources list, lists and cache under build/). A trixie build needs
# trixie's C library, so the package's libraries and its loader are unpacked beside it and
#   OUTDIR/virtiofsd        a wrapper that runs the binary through that loader
# is what the benchmark starts. OUTDIR/version says which package it is. Idempotent.
set -eu
out=$1
if [ -x "$out/virtiofsd" ] && [ -s "$out/version" ]; then
	exit 0
fi
here=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
for suite in bookworm-backports trixie; do
	opts=$("$here/guest/apt-suite.sh" "$suite" "$here/build/apt-$suite")
	# shellcheck disable=SC2086
	if apt-cache $opts show virtiofsd >/dev/null 2>&1; then
		break
	fi
	suite=""
done
[ -n "$suite" ] || { echo "fetch-virtiofsd-rs: no virtiofsd package in bookworm-backports or trixie" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # apt downloads as _apt
# The binary and the shared libraries it links (virtiofsd's Depends, less the uidmap tools).
# shellcheck disable=SC2086
(cd "$tmp" && apt-get -q $opts download virtiofsd libc6 libcap-ng0 libgcc-s1 libseccomp2 >/dev/null)
rm -rf "$out/root"
mkdir -p "$out/root"
for deb in "$tmp"/*.deb; do
	dpkg -x "$deb" "$out/root"
done
bin=$(find "$out/root" -type f -name virtiofsd -perm -u+x | head -n1)
[ -n "$bin" ] || { echo "fetch-virtiofsd-rs: the package has no virtiofsd binary" >&2; exit 1; }
ld=$(find "$out/root" -name 'ld-linux-x86-64.so.2' | head -n1)
libs="$out/root/lib/x86_64-linux-gnu:$out/root/usr/lib/x86_64-linux-gnu"
cat >"$out/virtiofsd" <<WRAP
#!/bin/sh
# The Rust virtiofsd ($suite) through its own suite's loader and C library (fetch-virtiofsd-rs.sh).
exec "$ld" --library-path "$libs" "$bin" "\$@"
WRAP
chmod +x "$out/virtiofsd"
# shellcheck disable=SC2086
echo "virtiofsd $(dpkg-deb -f "$tmp"/virtiofsd_*.deb Version) ($suite)" >"$out/version"
"$out/virtiofsd" --version >/dev/null
echo "fetch-virtiofsd-rs: $(cat "$out/version") in $out"
