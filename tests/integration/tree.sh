#!/bin/bash
# tree.sh: a kernel build tree as --kernel (issue 13): Debian's linux-source built small by
# `make ktree` (guest/build-ktree.sh: tinyconfig + ringvm's fragment, virtio-fs, FUSE, overlayfs and
# loop as modules), booted with `ringvm run --kernel TREE` under the host's own userland: the boot
# modules come from the tree's initramfs, a module of the tree loads with modprobe in place, a
# command runs and its status returns. Needs a KVM that runs Linux (the lab here). Env: RINGVM,
# KTREE (default build/ktree/linux). TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init tree
tree=$(cd "${KTREE:-build/ktree/linux}" 2>/dev/null && pwd)
if [ -z "$tree" ] || [ ! -f "$tree/arch/x86/boot/bzImage" ]; then
	notok "no kernel tree at ${KTREE:-build/ktree/linux} (make ktree)"
	it_done
fi
release=$(cat "$tree/include/config/kernel.release")
# A cache of our own: the tree's initramfs is made fresh by this run.
export XDG_CACHE_HOME=$tmp/cache

vm --kernel "$tree" -- sh -c 'uname -r; modprobe loop && test -e /dev/loop-control && echo loop-loaded
	cut -d" " -f1 /proc/modules | sort | tr "\n" " "; echo
	test -x /usr/bin/python3 && echo host-userland
	test -f "$0/Makefile" && echo tree-visible
	echo probe >/ringvm-tree-probe && cat /ringvm-tree-probe
	exit 9' "$tree"
[ "$rc" = 9 ] && ok "a command runs on the tree's kernel and its status returns (9)" || notok "status $(show)"
[ "$(head -n1 "$tmp/out")" = "$release" ] && ok "the guest runs the tree's kernel ($release)" ||
	notok "uname -r $(show)"
grep -qx loop-loaded "$tmp/out" && ok "modprobe loads the tree's own loop.ko, in place, without modules_install" ||
	notok "modprobe loop $(show)"
mods=" $(sed -n 3p "$tmp/out") "
missing=
for m in fuse virtiofs overlay loop; do
	case $mods in *" $m "*) ;; *) missing="$missing $m" ;; esac
done
[ -z "$missing" ] && ok "the boot modules (fuse, virtiofs, overlay) came from the tree's initramfs" ||
	notok "modules not loaded:$missing (loaded:$mods) $(show)"
grep -qx host-userland "$tmp/out" && ok "--root / is the default: the host's userland runs" || notok "root $(show)"
grep -qx tree-visible "$tmp/out" && ok "the tree is at its own path in the guest" || notok "tree path $(show)"
grep -qx probe "$tmp/out" && [ ! -e /ringvm-tree-probe ] &&
	ok "the root is writable through an overlay; the host's / is untouched" || notok "overlay $(show)"
ls "$XDG_CACHE_HOME"/ringvm/trees/*/initramfs.img >/dev/null 2>&1 &&
	ok "the tree's initramfs was made in the cache" || notok "cache $(ls -R "$XDG_CACHE_HOME" 2>&1 | head -n 5)"

# The same kernel with a .config that lacks what ringvm needs is refused before booting (a stand-in
# tree: the real one is never changed).
bad=$tmp/bad-tree
mkdir -p "$bad/arch/x86/boot" "$bad/include/config"
ln -s "$tree/arch/x86/boot/bzImage" "$bad/arch/x86/boot/bzImage"
cp "$tree/include/config/kernel.release" "$bad/include/config/"
sed 's/^CONFIG_ACPI=y$/# CONFIG_ACPI is not set/' "$tree/.config" >"$bad/.config"
vm --kernel "$bad" -- true
[ "$rc" = 125 ] && grep -q "CONFIG_ACPI=y" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] &&
	ok "a tree whose .config lacks ACPI is refused in one line naming it" || notok "refusal $(show)"
it_done
