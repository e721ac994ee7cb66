#!/bin/sh
# build-ktree.sh: a small kernel build tree for the tests of `ringvm run --kernel TREE`, from Debian's
# linux-source package (downloaded with apt-get, unpacked under OUTDIR, never installed).
#
#   guest/build-ktree.sh RINGVM OUTDIR
#
# OUTDIR/linux: tinyconfig, then `RINGVM kconfig --apply` (ringvm's fragment through the tree's
# merge_config.sh), then a few options as modules: virtio-fs, FUSE and overlayfs (so the tree's
# initramfs must carry them) and the loop driver (for the guest to modprobe from the tree). Built
# with `make bzImage modules`, never `modules_install`. Nothing is done when OUTDIR/linux/.built
# says the same package and fragment were built; JOBS sets make -j (default: the CPU count).
set -eu
ringvm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
pkg=linux-source-6.1
mkdir -p "$out"
out=$(cd "$out" && pwd)
tree=$out/linux

if ! apt-cache show "$pkg" >/dev/null 2>&1; then
	apt-get -q update >/dev/null
fi
version=$(apt-cache show "$pkg" | sed -n 's/^Version: //p' | head -n1)
extra="CONFIG_MODULES=y CONFIG_MODULE_UNLOAD=y CONFIG_FUSE_FS=m CONFIG_VIRTIO_FS=m CONFIG_OVERLAY_FS=m CONFIG_BLK_DEV_LOOP=m"
key="$pkg $version $("$ringvm" kconfig | md5sum | cut -c1-12) $extra $(md5sum <"$0" | cut -c1-12)"
if [ -f "$tree/.built" ] && [ "$(cat "$tree/.built")" = "$key" ] && [ -f "$tree/arch/x86/boot/bzImage" ]; then
	echo "build-ktree: $tree is up to date ($pkg $version)"
	exit 0
fi

start=$(date +%s)
if [ ! -f "$out/src.key" ] || [ "$(cat "$out/src.key")" != "$pkg $version" ]; then
	rm -rf "$out/dl" "$tree"
	mkdir -p "$out/dl"
	dl=$(mktemp -d)
	chmod 755 "$dl" # apt downloads as _apt
	(cd "$dl" && apt-get -q download "$pkg" >/dev/null) || { rm -rf "$dl"; exit 1; }
	dpkg -x "$dl"/*.deb "$out/dl/root"
	rm -rf "$dl"
	mkdir -p "$tree"
	tar -xf "$out"/dl/root/usr/src/linux-source-*.tar.xz -C "$tree" --strip-components=1
	rm -rf "$out/dl"
	echo "$pkg $version" >"$out/src.key"
fi
unpacked=$(date +%s)

cd "$tree"
rm -f .built
# ARCH=x86_64: plain tinyconfig on an x86-64 host would make a 32-bit kernel.
make -s ARCH=x86_64 tinyconfig >/dev/null
"$ringvm" kconfig --apply "$tree" >/dev/null
# The tree's own merge tool for the options this test wants as modules (-m: merge only).
printf '%s\n' $extra >"$out/extra.config"
scripts/kconfig/merge_config.sh -m .config "$out/extra.config" >/dev/null
make -s olddefconfig
for opt in $extra; do
	grep -qx "$opt" .config || { echo "build-ktree: $opt did not stick in .config" >&2; exit 1; }
done
make -s -j"${JOBS:-$(nproc)}" bzImage modules
echo "$key" >.built
end=$(date +%s)
echo "build-ktree: $tree ($pkg $version): unpacked in $((unpacked - start)) s, configured and built in $((end - unpacked)) s"
