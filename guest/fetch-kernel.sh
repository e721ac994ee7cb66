#!/bin/sh
# fetch-kernel.sh: unpack a Debian kernel package under OUTDIR without installing it on the host.
#
#   guest/fetch-kernel.sh FLAVOUR OUTDIR [SUITE]
#
# FLAVOUR is the metapackage suffix (cloud-amd64, amd64); SUITE is bookworm (default, the host's own
# sources) or bookworm-backports / trixie (guest/apt-suite.sh: a private sources list and lists folder under
# build/apt, so the host's apt configuration is never touched). Result:
#   OUTDIR/vmlinuz              the bzImage
#   OUTDIR/version              the kernel release (uname -r)
#   OUTDIR/root/lib/modules/... the modules tree
set -eu
flavour=$1
out=$2
suite=${3:-bookworm}
if [ -s "$out/version" ] && [ -f "$out/vmlinuz" ]; then
	exit 0
fi

apt_opts=""
if [ "$suite" != bookworm ]; then
	# The host's own archive, the other suite (guest/apt-suite.sh keeps it private under build/).
	mkdir -p "$(dirname "$out")"
	apt_opts=$("$(dirname "$0")/apt-suite.sh" "$suite" "$(cd "$(dirname "$out")" && pwd)/apt-$suite")
elif ! apt-cache show "linux-image-$flavour" >/dev/null 2>&1; then
	apt-get -q update >/dev/null
fi

# The metapackage depends on the versioned image package (linux-image-6.1.0-NN-FLAVOUR): resolve it
# now rather than pinning an ABI number that the archive will drop.
# shellcheck disable=SC2086
pkg=$(apt-cache $apt_opts depends "linux-image-$flavour" | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
[ -n "$pkg" ] || { echo "fetch-kernel: cannot resolve linux-image-$flavour in $suite" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # apt downloads as _apt
# shellcheck disable=SC2086
(cd "$tmp" && apt-get -q $apt_opts download "$pkg" >/dev/null)
rm -rf "$out"
mkdir -p "$out/root"
dpkg -x "$tmp"/*.deb "$out/root"
release=$(ls "$out/root/lib/modules" | head -n1)
cp "$out/root/boot/vmlinuz-$release" "$out/vmlinuz"
# The package leaves modules.dep to its postinst; make it here (kmod is a build dependency).
depmod -b "$out/root" "$release"
echo "$release" >"$out/version"
echo "fetch-kernel: $pkg ($release) in $out"
