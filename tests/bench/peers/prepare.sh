#!/bin/bash
# prepare.sh blk|fs: build what a benchmark's guests boot (initramfs + tools) and the metadata tree, under
# build/bench/, unless they are already newer than their inputs. Fast on the host, slow inside the lab
# (everything there is read over 9p under TCG), so `make bench-*` runs it before entering the lab.
# shellcheck disable=SC2086 # $scripts: a list of plain paths, split on purpose
set -eu
cd "$(dirname "$0")/../../.."
kind=$1
out=build/bench
mkdir -p "$out"
# fresh TARGET INPUT...: true if TARGET exists and is newer than every INPUT.
fresh() {
	local t=$1
	shift
	[ -e "$t" ] || return 1
	for i in "$@"; do [ "$i" -nt "$t" ] && return 1; done
	return 0
}
scripts="tests/bench/peers/fio-jobs.sh tests/bench/peers/guest-fs.sh"
case $kind in
blk)
	fresh "$out/blk-initrd.img" build/guest/initramfs.img tests/bench/peers/mktools.sh $scripts ||
		tests/bench/peers/mktools.sh build/guest/initramfs.img "$out/blk-initrd.img" $scripts
	;;
fs)
	kdir=${KERNEL_DIR:-build/lab/kernel}
	# A few thousand small files from the host's documentation, in a fixed order.
	fresh "$out/tree.tar" tests/bench/peers/prepare.sh ||
		(cd / && find usr/share/doc -size -32k \( -type f -o -type l \) | LC_ALL=C sort |
			head -n "${TREE_FILES:-2000}" | tar -cf - -T -) >"$out/tree.tar"
	if ! fresh "$out/fs-initrd.img" build/guest/init "$kdir/version" "$out/tree.tar" \
		tests/bench/peers/mktools.sh $scripts; then
		COMPRESS=none guest/mkinitramfs.sh build/guest/init "$kdir" "$out/fs-base.img" \
			virtio_mmio virtio_blk virtiofs fuse overlay 9p 9pnet_virtio >/dev/null
		tests/bench/peers/mktools.sh "$out/fs-base.img" "$out/fs-initrd.img" $scripts "$out/tree.tar"
	fi
	;;
*)
	echo "prepare.sh: blk or fs, not '$kind'" >&2
	exit 2
	;;
esac
