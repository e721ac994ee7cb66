#!/bin/sh
# tree-initramfs.sh: ringvm's initramfs and a modules directory for a kernel build tree, without
# `make modules_install` (ringvm run --kernel TREE runs it; vmm/cli_tree.c).
#
#   tree-initramfs.sh TREE RELEASE INIT OUT KEY
#
# OUT/root/lib/modules/RELEASE: a link to each module the tree built (its modules.order), where
# modules_install would put it, and depmod's index over them. ringvm shares it read-only at
# /lib/modules/RELEASE, so the guest's modprobe loads the tree's own .ko files in place: the links
# are absolute paths into the tree, which the guest sees at the same path.
# OUT/initramfs.img: ringvm's PID 1 (INIT) with the modules it needs before the root is mounted
# (virtio_mmio and each device kind's, KIND_GUEST_MODULES of the devices' fragments: those of them
# the tree built as modules). guest/guest.mk writes that list into the copy it installs next to
# ringvm (build/guest/); this file itself has only its placeholder.
# OUT/key: KEY, what ringvm says OUT is made from (the release and the times and sizes of the
# tree's modules.order, .config, images, INIT and this script: vmm/cli_tree.c). ringvm compares it
# itself and runs this only when it differs; OUT is rebuilt beside it and swapped in.
set -eu
if [ $# -ne 5 ]; then
	echo "usage: $0 TREE RELEASE INIT OUT KEY" >&2
	exit 2
fi
tree=$1
release=$2
init=$3
out=$4
key=$5
here=$(dirname "$0")
boot_modules="virtio_mmio @KIND_GUEST_MODULES@"
case $boot_modules in
*@*)
	echo "$0: the module list is not filled in: run build/guest/tree-initramfs.sh (make)" >&2
	exit 2
	;;
esac

new=$out.new.$$
trap 'rm -rf "$new"' EXIT
rm -rf "$new"
moddir=$new/root/lib/modules/$release
mkdir -p "$moddir"
echo "$release" >"$new/version"
if [ -f "$tree/modules.order" ]; then
	# modules.order names the objects (.o since Linux 6.2, .ko before), relative to the tree.
	while read -r m; do
		ko=${m%.o}
		ko=${ko%.ko}.ko
		[ -f "$tree/$ko" ] || continue
		mkdir -p "$moddir/kernel/$(dirname "$ko")"
		ln -s "$tree/$ko" "$moddir/kernel/$ko"
		echo "kernel/$ko" >>"$moddir/modules.order"
	done <"$tree/modules.order"
	for f in modules.builtin modules.builtin.modinfo; do
		[ -f "$tree/$f" ] && cp "$tree/$f" "$moddir/$f"
	done
	depmod -b "$new/root" "$release"
else
	: >"$moddir/modules.dep"
fi
# Only the boot modules the tree has as modules: built-in ones need nothing, and mkinitramfs.sh
# wants at least one name when it is given any.
boot=
# shellcheck disable=SC2086
for m in $("$here/kmod-closure.sh" "$moddir" $boot_modules); do
	boot="$boot $(basename "$m" .ko)"
done
# shellcheck disable=SC2086
COMPRESS=none "$here/mkinitramfs.sh" "$init" "$new" "$new/initramfs.img" $boot >/dev/null
rm -rf "$new/initramfs.img.d"
echo "$key" >"$new/key"
rm -rf "$out.old.$$"
[ ! -e "$out" ] || mv "$out" "$out.old.$$"
mv "$new" "$out"
rm -rf "$out.old.$$"
