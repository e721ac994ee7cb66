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
bench_hold_latency >"$data/latency" # in this shell, not a $(...) subshell: the fd must stay open
latency=$(cat "$data/latency")
BENCH_MEM=512M
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The first ringvm run makes the tree's initramfs (kept in the cache) and warms the page cache.
"$ringvm" run --kernel "$tree" -- true || { echo "devloop: ringvm cannot boot $tree" >&2; exit 1; }
# (the tree's modules share is what `run --kernel TREE` adds by itself; named here for the direct run)
initrd=$(ls "$XDG_CACHE_HOME"/ringvm/trees/*/initramfs.img)

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
	"$ringvm" run --memory "$BENCH_MEM" --cpus 1 --timing "$@" -- true >"$data/ringvm.log" 2>"$data/ringvm.err" </dev/null
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
echo "  tree: $tree ($release); both: $BENCH_MEM RAM, 1 vCPU, the same initramfs, PID 1 and command"
echo "  ringvm boots the tree's $tree_entry; QEMU its bzImage"
row() { [ -s "$data/$1.ms" ] && printf '  %-50s %s\n' "$2" "$(tests/bench/stats.sh <"$data/$1.ms")"; }
row ringvm "ringvm run --kernel TREE -- true (ms)"
row qemu "virtiofsd + QEMU microvm, bzImage (ms)"
row direct "ringvm, $(basename "$tree_image") and initramfs named (ms)"
row bzimage "ringvm, bzImage and initramfs named (ms)"
row qemu_pvh "virtiofsd + QEMU microvm, vmlinux through PVH (ms)"
for name in ringvm direct bzimage; do
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
