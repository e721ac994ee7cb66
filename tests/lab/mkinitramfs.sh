#!/bin/sh
# mkinitramfs.sh: build the lab's L1 initramfs (busybox, tests/lab/init and modprobe, the KVM/9p/virtio
# modules; the others load on demand from the lab kernel's tree, see tests/lab/modprobe).
#
#   tests/lab/mkinitramfs.sh KERNELDIR OUT
#
# KERNELDIR is what guest/fetch-kernel.sh made (version, root/lib/modules/...). OUT is an uncompressed
# newc cpio: L1 runs under TCG, where unpacking is cheap but decompressing is not.
set -eu
kdir=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
release=$(cat "$kdir/version")
moddir=$kdir/root/lib/modules/$release
busybox=${BUSYBOX:-/bin/busybox}

# A dynamic busybox would need the host's libc inside the initramfs.
if ldd "$busybox" >/dev/null 2>&1; then
	echo "mkinitramfs: $busybox is dynamically linked (install busybox-static)" >&2
	exit 1
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/lib/modules"
cp "$busybox" "$stage/bin/busybox"
cp "$here/init" "$stage/init"
cp "$here/modprobe" "$stage/bin/lab-modprobe"
chmod 0755 "$stage/init" "$stage/bin/busybox" "$stage/bin/lab-modprobe"

"$repo/guest/kmod-closure.sh" "$moddir" kvm_amd kvm_intel 9pnet_virtio 9p overlay virtio_console \
	virtio_pci >"$stage/lib/modules/order"
while read -r ko; do
	mkdir -p "$stage/lib/modules/$(dirname "$ko")"
	cp "$moddir/$ko" "$stage/lib/modules/$ko"
done <"$stage/lib/modules/order"

tmp=$out.tmp
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$tmp"
mv "$tmp" "$out"
echo "mkinitramfs: $out ($(wc -l <"$stage/lib/modules/order") modules, kernel $release)"
