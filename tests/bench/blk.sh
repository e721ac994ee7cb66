#!/bin/bash
# blk.sh: `make bench-blk`: the same fio jobs against one disk image from the host, ringvm and QEMU (virtio-blk
# with an iothread), as one table of IOPS, bandwidth, latency and ratios. Run through tests/with-kvm.
#
# Figures, never pass/fail: a peer that fails or hangs shows "failed" in its cells, the others still run.
# Raw results stay in build/bench/blk/ (RESULTS, one console log per peer) even if the run dies half way.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/bench/peers/lib.sh
kernel=${KERNEL:-build/guest/kernel/vmlinuz}
size=${DISK_MB:-1024}
runtime=${RUNTIME:-10}
out=build/bench/blk
data=${BENCH_DATA:-/var/tmp/ringvm-bench-blk}
mkdir -p "$out" "$data" && rm -f "$out"/*
trap 'rm -rf "$data"' EXIT
latency=$(bench_hold_latency)
say() { echo "blk: $(date +%T) $*" >&2; }
say prepare

# The image lives in memory (tmpfs): the figures are about the path from the guest to the host's file,
# not about a disk. Written in full, so no read hits a hole.
img=$data/disk.img
dd if=/dev/urandom of="$img" bs=1M count="$size" status=none || { echo "blk: cannot write $img" >&2; exit 1; }
# `make bench-blk` has prepared the image on the host; rebuilding it here (over 9p, under TCG) takes minutes.
{ [ -e build/bench/blk-initrd.img ] || tests/bench/peers/prepare.sh blk; } && cp build/bench/blk-initrd.img "$data/initrd" ||
	{ echo "blk: cannot build the tools initramfs" >&2; exit 1; }
limit=$((4 * (runtime + 2) + 240))
cmd="ringvm.cmd=sh,/bench/fio-jobs.sh,blk,/dev/vda,$runtime"

# tmpfs has no O_DIRECT in L1's Linux 6.1, so the host reads through the page cache (that is, memory),
# and the peers open the image without O_DIRECT too. Inside the guests direct=1 bypasses the guest's cache.
# ROUNDS rounds (default 3), the peers interleaved within each, so a slow spell of the machine costs every
# peer alike; the table shows medians and the IOPS range. ringvm-poll is ringvm with its queue workers
# busy-polling the ring for POLL_US microseconds (default 50; 0 leaves that peer out) before sleeping.
rounds=${ROUNDS:-3}
poll_us=${POLL_US:-50}
for round in $(seq 1 "$rounds"); do
	say "round $round/$rounds: host"
	FIO_DIRECT=0 tests/bench/peers/fio-jobs.sh blk "$img" "$runtime" >"$out/host.$round.log" 2>&1
	bench_results host "$out/host.$round.log" >>"$out/RESULTS"

	say "round $round/$rounds: ringvm"
	bench_ringvm "$out/ringvm.$round.log" "$limit" --initrd "$data/initrd" --disk "$img,direct=off" \
		-- sh /bench/fio-jobs.sh blk /dev/vda "$runtime"
	echo "# ringvm status $?" >>"$out/ringvm.$round.log"
	bench_results ringvm "$out/ringvm.$round.log" >>"$out/RESULTS"

	if [ "$poll_us" != 0 ]; then
		say "round $round/$rounds: ringvm-poll ($poll_us us)"
		bench_ringvm "$out/ringvm-poll.$round.log" "$limit" --initrd "$data/initrd" \
			--disk "$img,direct=off,poll_us=$poll_us" -- sh /bench/fio-jobs.sh blk /dev/vda "$runtime"
		echo "# ringvm-poll status $?" >>"$out/ringvm-poll.$round.log"
		bench_results ringvm-poll "$out/ringvm-poll.$round.log" >>"$out/RESULTS"
	fi

	say "round $round/$rounds: qemu"
	bench_qemu "$out/qemu.$round.log" "$limit" "$kernel" "$data/initrd" "$cmd" \
		-object iothread,id=io1 \
		-drive "if=none,id=d0,file=$img,format=raw,aio=io_uring,cache.direct=off" \
		-device virtio-blk-device,drive=d0,iothread=io1
	echo "# qemu status $?" >>"$out/qemu.$round.log"
	bench_results qemu "$out/qemu.$round.log" >>"$out/RESULTS"
done

# A peer that printed nothing at all still gets its row of "failed".
peers="host ringvm qemu"
[ "$poll_us" = 0 ] || peers="host ringvm ringvm-poll qemu"
for peer in $peers; do
	for job in randread-4k-qd1 randread-4k-qd64 randwrite-4k-qd64 seqread-128k-qd16; do
		grep -q "^$peer $job " "$out/RESULTS" || echo "$peer $job failed" >>"$out/RESULTS"
	done
done
echo "bench-blk: fio ${runtime}s + 2s ramp per job, libaio, $((size))MiB image on tmpfs; guests: 1 vCPU, $BENCH_MEM,"
echo "  $(basename "$kernel") $(cat "$(dirname "$kernel")/version" 2>/dev/null); host: $(uname -r), $(nproc) CPUs;" \
	"/dev/cpu_dma_latency $latency"
echo "  ringvm: seccomp ${RINGVM_SECCOMP:-on (kill)}; ringvm-poll: poll_us=$poll_us; $rounds rounds, peers interleaved"
echo "  QEMU $(qemu-system-x86_64 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p') microvm, virtio-blk-device + iothread, aio=io_uring, cache.direct=off"
bench_table "$out/RESULTS" host qemu
