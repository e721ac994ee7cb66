#!/bin/sh
# mkinitramfs.sh: pack ringvm's guest initramfs (PID 1, busybox, the kernel modules) into a cpio archive.
#
#   guest/mkinitramfs.sh INIT KERNELDIR OUT [MODULE...]
#
# INIT is the static PID 1 (build/guest/init), KERNELDIR a kernel unpacked by guest/fetch-kernel.sh,
# OUT the archive to write; MODULE... are module names whose closure (guest/kmod-closure.sh) goes in,
# loaded by PID 1 in /lib/modules/load.order. The staging tree is OUT without its .cpio* suffix plus
# .d (build/guest/initramfs.img.d), rebuilt from scratch every time; every entry is owned by 0:0 and dated at SOURCE_DATE_EPOCH (default 0), so the archive does
# not depend on who built it or when. COMPRESS=gzip|lz4|zstd|xz|none picks the compression
# (default lz4: the fastest for the kernel to unpack; the kernel finds the format by its magic).
set -eu
if [ $# -lt 3 ]; then
	echo "usage: $0 INIT KERNELDIR OUT [MODULE...]" >&2
	exit 2
fi
init=$1
kdir=$2
out=$3
shift 3
here=$(dirname "$0")
busybox=${BUSYBOX:-/bin/busybox}
epoch=${SOURCE_DATE_EPOCH:-0}

release=$(cat "$kdir/version")
moddir=$kdir/root/lib/modules/$release
[ -x "$init" ] || { echo "mkinitramfs: no PID 1 at $init" >&2; exit 1; }
[ -d "$moddir" ] || { echo "mkinitramfs: no modules at $moddir" >&2; exit 1; }
# A dynamically linked busybox would need a libc in the image: insist on Debian's busybox-static.
if [ ! -x "$busybox" ] || readelf -l "$busybox" | grep -q 'program interpreter'; then
	echo "mkinitramfs: $busybox is not static (install busybox-static)" >&2
	exit 1
fi

stage=${out%%.cpio*}.d
rm -rf "$stage"
mkdir -p "$stage"
(cd "$stage" && mkdir -p bin sbin usr/bin usr/sbin etc root proc sys dev run tmp mnt var/tmp lib/modules)
chmod 1777 "$stage/tmp"
chmod 0700 "$stage/root"
install -m 0755 "$init" "$stage/init"
install -m 0755 "$busybox" "$stage/bin/busybox"

# Every applet at the path busybox gives it, except the ones that would compete with our /init.
"$busybox" --list-full | while read -r applet; do
	case $applet in
	bin/busybox | sbin/init | linuxrc | "") continue ;;
	esac
	[ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
done

# Modules keep their place under lib/modules/RELEASE with a matching modules.dep, so busybox's
# modprobe also works in the guest shell; load.order lists them relative to lib/modules.
: >"$stage/lib/modules/load.order"
if [ $# -gt 0 ]; then
	"$here/kmod-closure.sh" "$moddir" "$@" >"$stage/closure"
	[ -s "$stage/closure" ] || { echo "mkinitramfs: no module found for: $*" >&2; exit 1; }
	# Newer Debian kernels ship .ko.xz; PID 1 loads plain files with finit_module, so unpack them here.
	while read -r ko; do
		plain=${ko%.xz}
		plain=${plain%.zst}
		plain=${plain%.gz}
		mkdir -p "$stage/lib/modules/$release/$(dirname "$ko")"
		case $ko in
		*.xz) xz -dc "$moddir/$ko" >"$stage/lib/modules/$release/$plain" ;;
		*.zst) zstd -qdc "$moddir/$ko" >"$stage/lib/modules/$release/$plain" ;;
		*.gz) gzip -dc "$moddir/$ko" >"$stage/lib/modules/$release/$plain" ;;
		*) cp "$moddir/$ko" "$stage/lib/modules/$release/$ko" ;;
		esac
		echo "$release/$plain" >>"$stage/lib/modules/load.order"
	done <"$stage/closure"
	awk 'NR == FNR { want[$0 ":"] = 1; next } ($1 in want)' "$stage/closure" "$moddir/modules.dep" |
		sed 's/\.ko\.\(xz\|zst\|gz\)/.ko/g' >"$stage/lib/modules/$release/modules.dep"
	rm "$stage/closure"
fi

# Names for ids 0 and 5 (devpts' tty group), so ls -l and id read well.
cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
EOF
cat >"$stage/etc/group" <<'EOF'
root:x:0:
tty:x:5:
EOF

case ${COMPRESS:-lz4} in
gzip) compress="gzip -9n" ;;
lz4) compress="lz4 -l -9 -q" ;; # the kernel reads only the legacy lz4 frame (-l)
zstd) compress="zstd -19 -q" ;;
xz) compress="xz -9 --check=crc32" ;; # the kernel's xz decoder knows crc32, not crc64
none) compress="cat" ;;
*) echo "mkinitramfs: unknown COMPRESS=$COMPRESS" >&2; exit 1 ;;
esac

find "$stage" -exec touch -h -d "@$epoch" {} +
# In two steps, so that a cpio failure is not hidden by the pipe into the compressor.
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --reproducible --quiet) \
	>"$out.cpio"
$compress <"$out.cpio" >"$out.tmp"
rm "$out.cpio"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($(wc -c <"$out") bytes, ${COMPRESS:-lz4}, modules: $(tr '\n' ' ' <"$stage/lib/modules/load.order"))"
