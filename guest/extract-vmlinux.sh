#!/bin/sh
# extract-vmlinux.sh: recover the uncompressed ELF vmlinux from a bzImage (for ringvm's PVH boot path).
#
#   guest/extract-vmlinux.sh BZIMAGE OUT
#
# The boot protocol's setup header says where the compressed payload is (payload_offset, 0x248, and
# payload_length, 0x24c, both relative to the protected-mode code after the setup sectors); its magic
# says how it is compressed. Checks that OUT is an x86-64 ELF and says whether it has the PVH entry
# note (Xen ELF note type 18, XEN_ELFNOTE_PHYS32_ENTRY), which ringvm needs to boot it.
set -eu
if [ $# -ne 2 ]; then
	echo "usage: $0 BZIMAGE OUT" >&2
	exit 2
fi
bz=$1
out=$2

# u32/u8 little-endian at a byte offset of the bzImage.
u32() { od -An -tu4 -j "$1" -N4 "$bz" | tr -d ' '; }
u8() { od -An -tu1 -j "$1" -N1 "$bz" | tr -d ' '; }
hexat() { od -An -tx1 -j "$1" -N "$2" "$bz" | tr -d ' \n'; }

[ "$(hexat 514 4)" = 48647253 ] || { echo "extract-vmlinux: $bz is not a bzImage (no HdrS)" >&2; exit 1; }
setup_sects=$(u8 497)
[ "$setup_sects" -ne 0 ] || setup_sects=4
payload_offset=$(u32 584)
payload_length=$(u32 588)
start=$(( (setup_sects + 1) * 512 + payload_offset ))
size=$(wc -c <"$bz")
if [ "$payload_length" -lt 16 ] || [ $((start + payload_length)) -gt "$size" ]; then
	echo "extract-vmlinux: $bz: payload $start+$payload_length is outside the file" >&2
	exit 1
fi

# Every format but gzip has the uncompressed size appended as 4 more bytes (the kernel's size_append).
sized=1
magic=$(hexat "$start" 6)
case $magic in
1f8b*) format=gzip; dec="gzip -dc"; sized=0 ;;
fd377a585a00) format=xz; dec="xz -dc" ;;
28b52ffd*) format=zstd; dec="zstd -dc -q" ;;
02214c18*) format=lz4; dec="lz4 -dc -q" ;;
425a68*) format=bzip2; dec="bzip2 -dc" ;;
5d0000*) format=lzma; dec="xz -dc --format=lzma" ;;
894c5a4f*) format=lzo; dec="lzop -dc" ;;
*) echo "extract-vmlinux: $bz: unknown payload compression (magic $magic)" >&2; exit 1 ;;
esac
command -v "${dec%% *}" >/dev/null || { echo "extract-vmlinux: $format payload needs ${dec%% *}" >&2; exit 1; }

tmp=$out.tmp
trap 'rm -f "$tmp"' EXIT
tail -c "+$((start + 1))" "$bz" | head -c "$((payload_length - 4 * sized))" | $dec >"$tmp"
if [ "$sized" -eq 1 ]; then
	want=$(u32 $((start + payload_length - 4)))
	got=$(wc -c <"$tmp")
	if [ "$want" -ne "$got" ]; then
		echo "extract-vmlinux: $bz: $format payload gave $got bytes, the header says $want" >&2
		exit 1
	fi
fi
if ! readelf -h "$tmp" 2>/dev/null | grep -q 'Advanced Micro Devices X86-64'; then
	echo "extract-vmlinux: $bz: the $format payload is not an x86-64 ELF" >&2
	exit 1
fi
mv "$tmp" "$out"
# readelf names the note type when it knows it, else prints the number.
if readelf -n "$out" | grep -Eq '^ *Xen .*(PHYS32_ENTRY|note type: \(0x00000012\))'; then
	pvh="has the PVH entry note"
else
	pvh="has NO PVH entry note (cannot boot through PVH)"
fi
echo "extract-vmlinux: $out ($format, $(wc -c <"$out") bytes) $pvh"
