#!/bin/bash
# mktools.sh BASE_INITRD OUT [FILE...]: append the benchmark tools (fio, GNU tar, find, ...) to a guest initramfs.
#
# Every peer boots the same initramfs, so fio comes from the same place for ringvm and QEMU (QEMU's
# guest has no way to reach the host's /). The tools and their shared libraries (ldd closure) go into
# an uncompressed cpio appended to BASE_INITRD: the kernel unpacks concatenated archives in order.
# FILE... (the guest scripts, a tarball) land under /bench in the guest. The result is uncompressed: the
# kernel's lz4 decoder cannot find the end of a legacy lz4 frame followed by another archive.
set -eu
base=$1
out=$2
shift 2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# Into /usr/local/bin, first in PID 1's PATH: the kernel does not replace busybox's applet links that
# already exist at /usr/bin/xargs and the like when a later archive brings a file of the same name.
tools="/usr/bin/fio /usr/bin/tar /usr/bin/find /usr/bin/xargs /usr/bin/stat /usr/bin/du /usr/bin/date
	/usr/bin/sync /usr/bin/wc"
mkdir -p "$stage/bench" "$stage/usr/local/bin"
for t in $tools; do
	cp -L "$t" "$stage/usr/local/bin/"
done
# shellcheck disable=SC2086
ldd $tools 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]*ld-linux/ { print $1 }' | sort -u |
	while read -r lib; do
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
# Debian's loader path is /lib64/ld-linux-x86-64.so.2; keep it whatever ldd printed.
mkdir -p "$stage/lib64"
[ -e "$stage/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib64/"
for f in "$@"; do
	cp -L "$f" "$stage/bench/"
done
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet) >"$stage.cpio"
case $(od -An -tx1 -N4 "$base" | tr -d ' ') in
02214c18) lz4 -dc "$base" ;;     # lz4 legacy frame (guest/mkinitramfs.sh's default)
1f8b*) gzip -dc "$base" ;;
28b52ffd) zstd -dc "$base" ;;
*) cat "$base" ;;                # assume an uncompressed cpio
esac >"$out.tmp"
cat "$stage.cpio" >>"$out.tmp"
mv "$out.tmp" "$out"
rm -f "$stage.cpio"
