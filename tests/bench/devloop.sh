#!/bin/bash
# devloop.sh [N]: `make bench-devloop`: the kernel developer's round trip, `ringvm run --kernel TREE
# -- true` (--root / by default), against the virtme-ng recipe: the C virtiofsd serving / (as root)
# and QEMU microvm booting the same tree's bzImage, with the same initramfs and PID 1 (the one ringvm
# made for the tree), the same command, the same RAM (512M) and one vCPU each, in the same session,
# N rounds each (default 10), interleaved. A tree built with CONFIG_PVH=y (`ringvm kconfig`) boots
# under ringvm from its vmlinux through PVH, without the bzImage's decompressor: the output says so,
# and gives the like-for-like figures too, ringvm on the bzImage and QEMU on the vmlinux through PVH.
# Prints medians and the ratio ringvm / QEMU (< 1: ringvm is faster). Figures, never pass/fail. Run
# through tests/with-kvm; the tree is `make ktree`'s (KTREE overrides it).
#
# Where the files live: a developer's tree and ringvm sit on a local disk, in the page cache after
# the build. In the lab the checkout is a 9p share with cache=mmap, whose page cache goes at every
# close: each run would read the kernel and ringvm's own binary over 9p again, while QEMU and
# virtiofsd come from the host's root (cache=loose, kept in L1's page cache). So both peers boot a
# copy of the tree's boot files (its .config, release, images and the modules it built: what
# `run --kernel TREE` and QEMU read) in L1's own memory, and ringvm runs from a copy there too;
# one row keeps ringvm on the 9p checkout, to show what the share costs. DEVLOOP_LOCAL=0 boots
# everything in place.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/bench/peers/lib.sh
n=${1:-10}
tree=$(cd "${KTREE:-build/ktree/linux}" && pwd) || exit 1
ringvm=${RINGVM:-build/ringvm}
virtiofsd=${VIRTIOFSD:-/usr/lib/qemu/virtiofsd}
data=$(mktemp -d /var/tmp/ringvm-bench-devloop.XXXXXX)
export XDG_CACHE_HOME=$data/cache
vfs_pid=
cleanup() {
	[ -z "$vfs_pid" ] || kill "$vfs_pid" 2>/dev/null
	rm -rf "$data"
}
trap cleanup EXIT
shared_tree=$tree shared_ringvm=$ringvm
if [ "${DEVLOOP_LOCAL:-1}" = 1 ]; then
	# The tree's boot files, at the same places under the copy (modules.order names the .ko files).
	mkdir -p "$data/tree" "$data/bin/guest"
	(cd "$tree" && cp --parents .config include/config/kernel.release vmlinux arch/x86/boot/bzImage \
		"$data/tree/" &&
		for f in modules.order modules.builtin modules.builtin.modinfo; do
			[ ! -f "$f" ] || cp "$f" "$data/tree/"
		done &&
		if [ -f modules.order ]; then
			sed 's/\.o$/.ko/' modules.order | while read -r ko; do
				[ ! -f "$ko" ] || cp --parents "$ko" "$data/tree/"
			done
		fi) || { echo "devloop: cannot copy $tree's boot files" >&2; exit 1; }
	tree=$data/tree
	# ringvm and the guest files it takes from next to itself (vmm/cli_run.c).
	guest_files=$(dirname "$ringvm")/guest
	cp "$ringvm" "$data/bin/ringvm" &&
		cp "$guest_files"/init "$guest_files"/tree-initramfs.sh "$guest_files"/mkinitramfs.sh \
			"$guest_files"/kmod-closure.sh "$data/bin/guest/" || exit 1
	ringvm=$data/bin/ringvm
	where="the tree's boot files and ringvm copied to L1's memory (a local disk's page cache)"
else
	where="the tree and ringvm in place"
fi
bench_hold_latency >"$data/latency" # in this shell, not a $(...) subshell: the fd must stay open
latency=$(cat "$data/latency")
BENCH_MEM=512M
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The first ringvm run makes the tree's initramfs (kept in the cache) and warms the page cache.
"$ringvm" run --kernel "$tree" -- true || { echo "devloop: ringvm cannot boot $tree" >&2; exit 1; }
[ "$shared_tree" = "$tree" ] || "$shared_ringvm" run --kernel "$shared_tree" -- true ||
	{ echo "devloop: ringvm cannot boot $shared_tree" >&2; exit 1; }
# (the tree's modules share is what `run --kernel TREE` adds by itself; named here for the direct run)
# (the cache's directory for a tree is named after its path: vmm/cli_tree.c)
initrd=$XDG_CACHE_HOME/ringvm/trees/$(printf '%s' "${tree#/}" | tr / _)/initramfs.img
[ -f "$initrd" ] || { echo "devloop: no initramfs made for $tree" >&2; exit 1; }

release=$(cat "$tree/include/config/kernel.release")
# What `run --kernel TREE` boots: the vmlinux through PVH when the tree has CONFIG_PVH=y.
if grep -qx CONFIG_PVH=y "$tree/.config" && [ -f "$tree/vmlinux" ]; then
	tree_image=$tree/vmlinux
	tree_entry="vmlinux through PVH (CONFIG_PVH=y): no decompressor"
else
	tree_image=$tree/arch/x86/boot/bzImage
	tree_entry="bzImage, as QEMU"
fi

# ringvm_once NAME ARGS...: one timed `ringvm run --timing ARGS -- true` with QEMU's RAM and vCPU
# count; its timing line kept too.
ringvm_once() {
	local name=$1 t0 rc
	shift
	t0=$(now_ms)
	"${RINGVM_BIN:-$ringvm}" run --memory "$BENCH_MEM" --cpus 1 --timing "$@" -- true >"$data/ringvm.log" \
		2>"$data/ringvm.err" </dev/null
	rc=$?
	if [ "$rc" = 0 ]; then
		echo $(($(now_ms) - t0)) >>"$data/$name.ms"
		# ms since ringvm started: first KVM_RUN, PID 1 reached, the end
		sed -n 's/.*first_kvm_run_ms=\([0-9.]*\) init_ms=\([0-9.]*\) end_ms=\([0-9.]*\).*/\1 \2 \3/p' \
			"$data/ringvm.err" >>"$data/$name.timing"
	else
		echo "devloop: $name status $rc: $(tail -n 3 "$data/ringvm.err")" >&2
	fi
}

# qemu_once NAME IMAGE: virtiofsd as root over /, then QEMU microvm booting IMAGE (a bzImage, or a
# vmlinux through PVH); the same PID 1 mounts / read-only under an overlay.
qemu_once() {
	local name=$1 image=$2 t0 rc
	rm -f "$data/vfs.sock"
	t0=$(now_ms)
	# sandbox=chroot: its default sandbox pivot_root()s into the source, which fails (EBUSY) where /
	# is a chroot, as in the lab; QEMU then gave up at once, which read as a fast boot.
	GLIBC_TUNABLES=glibc.malloc.arena_max=8 "$virtiofsd" --socket-path="$data/vfs.sock" \
		-o source=/ -o cache=auto -o sandbox=chroot >"$data/virtiofsd.log" 2>&1 &
	vfs_pid=$!
	while [ ! -S "$data/vfs.sock" ]; do
		kill -0 "$vfs_pid" 2>/dev/null || break
		sleep 0.005
	done
	bench_qemu "$data/qemu.log" 120 "$image" "$initrd" \
		"ringvm.root=root,ro ringvm.cmd=true ringvm.stdin=null" \
		-object "memory-backend-memfd,id=mem,size=$BENCH_MEM,share=on" -machine memory-backend=mem \
		-chardev "socket,id=vfs,path=$data/vfs.sock" -device vhost-user-fs-device,chardev=vfs,tag=root
	rc=$?
	wait "$vfs_pid" 2>/dev/null
	vfs_pid=
	[ "$rc" = 0 ] && echo $(($(now_ms) - t0)) >>"$data/$name.ms" ||
		echo "devloop: $name status $rc: $(tail -n 3 "$data/qemu.log" "$data/virtiofsd.log" | tr '\n' '|')" >&2
}

modules="$(dirname "$initrd")/root/lib/modules/$release:/lib/modules/$release,readonly"
for _ in $(seq "$n"); do
	ringvm_once ringvm --kernel "$tree"
	# The lab's artefact, for scale: ringvm and the tree read over the checkout's 9p share.
	[ "$shared_tree" = "$tree" ] || RINGVM_BIN=$shared_ringvm ringvm_once shared --kernel "$shared_tree"
	qemu_once qemu "$tree/arch/x86/boot/bzImage"
	# The same boot with the image and initramfs named directly: what the tree's preparation
	# (reading .config, checking the initramfs is current) costs; and on the bzImage, like QEMU.
	ringvm_once direct --kernel "$tree_image" --initrd "$initrd" --root / --share "$modules"
	if [ "$tree_image" != "$tree/arch/x86/boot/bzImage" ]; then
		ringvm_once bzimage --kernel "$tree/arch/x86/boot/bzImage" --initrd "$initrd" --root / --share "$modules"
		qemu_once qemu_pvh "$tree_image"
	fi
done
echo "devloop: '--kernel TREE --root / -- true', $n rounds each, interleaved ($(uname -r) in $(nproc) CPU(s); cpu_dma_latency $latency)"
echo "  tree: $shared_tree ($release); both: $BENCH_MEM RAM, 1 vCPU, the same initramfs, PID 1 and command"
echo "  files: $where"
echo "  ringvm boots the tree's $tree_entry; QEMU its bzImage"
row() { [ -s "$data/$1.ms" ] && printf '  %-50s %s\n' "$2" "$(tests/bench/stats.sh <"$data/$1.ms")"; }
row ringvm "ringvm run --kernel TREE -- true (ms)"
row qemu "virtiofsd + QEMU microvm, bzImage (ms)"
row shared "ringvm run --kernel TREE, tree and ringvm on 9p (ms)"
row direct "ringvm, $(basename "$tree_image") and initramfs named (ms)"
row bzimage "ringvm, bzImage and initramfs named (ms)"
row qemu_pvh "virtiofsd + QEMU microvm, vmlinux through PVH (ms)"
for name in ringvm shared direct bzimage; do
	[ -s "$data/$name.timing" ] || continue
	printf '  %-50s %s\n' "$name: start -> first KVM_RUN (ms)" "$(awk '{ print $1 }' "$data/$name.timing" | tests/bench/stats.sh)"
	printf '  %-50s %s\n' "$name: first KVM_RUN -> PID 1 (ms)" "$(awk '{ print $2 - $1 }' "$data/$name.timing" | tests/bench/stats.sh)"
	printf '  %-50s %s\n' "$name: PID 1 -> end (ms)" "$(awk '{ print $3 - $2 }' "$data/$name.timing" | tests/bench/stats.sh)"
done
median() { [ -s "$data/$1.ms" ] && tests/bench/stats.sh <"$data/$1.ms" | awk '{ print $2 }'; }
ratio() {
	awk -v r="$(median "$1")" -v q="$(median "$2")" -v what="$3" \
		'BEGIN { if (q > 0 && r > 0) printf "  ratio %s (medians): %.2fx\n", what, r / q }'
}
ratio ringvm qemu "ringvm / QEMU, run --kernel TREE against the virtme-ng recipe (goal <= 0.5x)"
ratio bzimage qemu "ringvm / QEMU, both on the bzImage"
ratio ringvm qemu_pvh "ringvm / QEMU, both on the vmlinux through PVH"
