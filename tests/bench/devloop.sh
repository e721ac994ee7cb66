#!/bin/bash
# devloop.sh [N]: `make bench-devloop`: the kernel developer's round trip, `ringvm run --kernel TREE
# -- true` (--root / by default), against the virtme-ng recipe: the C virtiofsd serving / (as root)
# and QEMU microvm booting the same tree's bzImage, with the same initramfs and PID 1 (the one ringvm
# made for the tree) and the same command, in the same session, N rounds each (default 10),
# interleaved. Prints medians and the ratio ringvm / QEMU (< 1: ringvm is faster). Figures, never
# pass/fail. Run through tests/with-kvm; the tree is `make ktree`'s (KTREE overrides it).
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

# ringvm_once NAME ARGS...: one timed `ringvm run --timing ARGS -- true`; its timing line kept too.
ringvm_once() {
	local name=$1 t0 rc
	shift
	t0=$(now_ms)
	"$ringvm" run --timing "$@" -- true >"$data/ringvm.log" 2>"$data/ringvm.err" </dev/null
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

# virtiofsd as root over /, then QEMU microvm; the same PID 1 mounts it read-only under an overlay.
qemu_once() {
	local t0 rc
	rm -f "$data/vfs.sock"
	t0=$(now_ms)
	GLIBC_TUNABLES=glibc.malloc.arena_max=8 "$virtiofsd" --socket-path="$data/vfs.sock" \
		-o source=/ -o cache=auto >"$data/virtiofsd.log" 2>&1 &
	vfs_pid=$!
	while [ ! -S "$data/vfs.sock" ]; do
		kill -0 "$vfs_pid" 2>/dev/null || break
		sleep 0.005
	done
	bench_qemu "$data/qemu.log" 120 "$tree/arch/x86/boot/bzImage" "$initrd" \
		"ringvm.root=root,ro ringvm.cmd=true ringvm.stdin=null" \
		-object "memory-backend-memfd,id=mem,size=$BENCH_MEM,share=on" -machine memory-backend=mem \
		-chardev "socket,id=vfs,path=$data/vfs.sock" -device vhost-user-fs-device,chardev=vfs,tag=root
	rc=$?
	wait "$vfs_pid" 2>/dev/null
	vfs_pid=
	[ "$rc" = 0 ] && echo $(($(now_ms) - t0)) >>"$data/qemu.ms" || echo "devloop: QEMU status $rc" >&2
}

for _ in $(seq "$n"); do
	ringvm_once ringvm --kernel "$tree"
	qemu_once
	# The same boot with the tree's image and initramfs named directly: what the tree's preparation
	# (reading .config, checking the initramfs is current) costs.
	ringvm_once direct --kernel "$tree/arch/x86/boot/bzImage" --initrd "$initrd" --root / \
		--share "$(dirname "$initrd")/root/lib/modules/$(cat "$tree/include/config/kernel.release"):/lib/modules/$(cat "$tree/include/config/kernel.release"),readonly"
done
echo "devloop: '--kernel TREE --root / -- true', $n rounds each, interleaved ($(uname -r) in $(nproc) CPU(s); cpu_dma_latency $latency)"
echo "  tree: $tree ($(cat "$tree/include/config/kernel.release"))"
printf '  %-44s %s\n' "ringvm run --kernel TREE -- true (ms)" "$(tests/bench/stats.sh <"$data/ringvm.ms")"
printf '  %-44s %s\n' "virtiofsd + QEMU microvm, same guest (ms)" "$(tests/bench/stats.sh <"$data/qemu.ms")"
printf '  %-44s %s\n' "ringvm, image and initramfs named (ms)" "$(tests/bench/stats.sh <"$data/direct.ms")"
for name in ringvm direct; do
	printf '  %-44s %s\n' "$name: start -> first KVM_RUN (ms)" "$(awk '{ print $1 }' "$data/$name.timing" | tests/bench/stats.sh)"
	printf '  %-44s %s\n' "$name: first KVM_RUN -> PID 1 (ms)" "$(awk '{ print $2 - $1 }' "$data/$name.timing" | tests/bench/stats.sh)"
	printf '  %-44s %s\n' "$name: PID 1 -> end (ms)" "$(awk '{ print $3 - $2 }' "$data/$name.timing" | tests/bench/stats.sh)"
done
r=$(tests/bench/stats.sh <"$data/ringvm.ms" | awk '{ print $2 }')
q=$(tests/bench/stats.sh <"$data/qemu.ms" | awk '{ print $2 }')
awk -v r="$r" -v q="$q" 'BEGIN { if (q > 0) printf "  ratio ringvm / QEMU (medians): %.2fx (goal <= 0.5x)\n", r / q }'
