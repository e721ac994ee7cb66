#!/bin/bash
# fs.sh: `make bench-fs`: fio and a metadata workload on a shared directory, from ringvm's virtio-fs,
# QEMU + virtiofsd (thread pool off, its default, and 64 threads) and QEMU's virtio-9p, as one table with
# ratios against virtiofsd. Run through tests/with-kvm.
#
# Every peer boots the same kernel (KERNEL_DIR, default the generic Debian kernel: the cloud one has no
# 9p) with the same initramfs (ours, plus 9p modules and the tools), so only the share's path differs.
# Figures, never pass/fail: a failed peer shows "failed"; raw results stay in build/bench/fs/.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/bench/peers/lib.sh
kdir=${KERNEL_DIR:-build/lab/kernel}
kernel=${KERNEL:-$kdir/vmlinuz}
runtime=${RUNTIME:-8}
parts=${PARTS:-all} # all, fio or meta
size=${FILE_MB:-256}
out=build/bench/fs
data=${BENCH_DATA:-/var/tmp/ringvm-bench-fs}
share=$data/share
virtiofsd=${VIRTIOFSD:-/usr/lib/qemu/virtiofsd}
mkdir -p "$out" "$share" && rm -f "$out"/*
vfs_pid=
cleanup() {
	[ -z "$vfs_pid" ] || kill "$vfs_pid" 2>/dev/null
	rm -rf "$data"
}
trap cleanup EXIT
latency=$(bench_hold_latency)
say() { echo "fs: $(date +%T) $*" >&2; }
say prepare

# `make bench-fs` has prepared the image on the host; rebuilding it here (over 9p, under TCG) takes minutes.
{ [ -e build/bench/fs-initrd.img ] || tests/bench/peers/prepare.sh fs; } && cp build/bench/fs-initrd.img "$data/initrd" ||
	{ echo "fs: cannot build the initramfs" >&2; exit 1; }
[ "$parts" = meta ] || dd if=/dev/urandom of="$share/data.bin" bs=1M count="$size" status=none || exit 1
# Per peer: the fio jobs, a boot, and the metadata workload, which is slow in the nested lab (an untar of
# 4000 files took 3 min on ringvm and over 5 on virtiofsd in one run).
limit=$((10 * (runtime + 2) + ${META_LIMIT:-900}))
guest_args="/bench/guest-fs.sh,virtiofs,/mnt/share"
vfs_mem=(-object "memory-backend-memfd,id=mem,size=$BENCH_MEM,share=on" -machine memory-backend=mem)

# peer_done NAME STATUS: collect a peer's figures from its console log.
peer_done() {
	echo "# $1 status $2" >>"$out/$1.log"
	bench_results "$1" "$out/$1.log" >>"$out/RESULTS"
	awk -v peer="$1" '/^META / { print peer, $2, $3 }' "$out/$1.log" >>"$out/META"
}

say ringvm
# ringvm keeps an O_PATH fd per inode the guest holds and bounds them by RLIMIT_NOFILE; with the lab's
# default limit an untar of a few thousand files runs out (ENFILE). virtiofsd raises its own limit to 1M
# (--rlimit-nofile); RINGVM_NOFILE gives ringvm the same, empty leaves the limit alone.
nofile=${RINGVM_NOFILE-1048576}
(
	[ -z "$nofile" ] || ulimit -n "$nofile" || echo "fs: cannot set ulimit -n $nofile" >&2
	bench_ringvm "$out/ringvm.log" "$limit" --kernel "$kernel" --initrd "$data/initrd" \
		--share "$share:/mnt/share" -- sh /bench/guest-fs.sh virtiofs /mnt/share "$runtime" "$parts"
)
peer_done ringvm $?

# virtiofsd POOL: QEMU with vhost-user-fs served by the C virtiofsd, cache=auto like ringvm's default.
run_virtiofsd() {
	local name=$1 pool=$2 rc
	rm -f "$data/vfs.sock"
	GLIBC_TUNABLES=glibc.malloc.arena_max=8 "$virtiofsd" --socket-path="$data/vfs.sock" \
		-o source="$share" -o cache=auto --thread-pool-size="$pool" >"$out/$name.virtiofsd.log" 2>&1 &
	vfs_pid=$!
	for _ in $(seq 50); do [ -S "$data/vfs.sock" ] && break; sleep 0.1; done
	bench_qemu "$out/$name.log" "$limit" "$kernel" "$data/initrd" \
		"ringvm.mount=bench,/mnt/share,rw ringvm.cmd=sh,$guest_args,$runtime,$parts" "${vfs_mem[@]}" \
		-chardev "socket,id=vfs,path=$data/vfs.sock" -device vhost-user-fs-device,chardev=vfs,tag=bench
	rc=$?
	kill "$vfs_pid" 2>/dev/null
	wait "$vfs_pid" 2>/dev/null
	vfs_pid=
	peer_done "$name" $rc
}
say virtiofsd
run_virtiofsd virtiofsd 0
say virtiofsd-tp64
run_virtiofsd virtiofsd-tp64 64

say 9p
bench_qemu "$out/9p.log" "$limit" "$kernel" "$data/initrd" "ringvm.cmd=sh,/bench/guest-fs.sh,9p,/mnt/share,$runtime,$parts" \
	-fsdev "local,id=f9,path=$share,security_model=none" -device virtio-9p-device,fsdev=f9,mount_tag=bench
peer_done 9p $?

peers="ringvm virtiofsd virtiofsd-tp64 9p"
jobs=$(awk '{ print $2 }' "$out/RESULTS" | awk '!seen[$0]++')
for peer in $peers; do
	for job in $jobs; do
		grep -q "^$peer $job " "$out/RESULTS" || echo "$peer $job failed" >>"$out/RESULTS"
	done
done
echo "bench-fs: fio ${runtime}s + 2s ramp per job, direct=1, one ${size}MiB file shared by the jobs, in L1's /var/tmp;"
echo "  guests: 1 vCPU, $BENCH_MEM, $(basename "$kernel") $(cat "$kdir/version"), all peers; host: $(uname -r)," \
	"$(nproc) CPUs; /dev/cpu_dma_latency $latency"
echo "  ringvm: seccomp ${RINGVM_SECCOMP:-on (kill)}, ulimit -n ${nofile:-unchanged ($(ulimit -n))}; QEMU $(qemu-system-x86_64 --version | sed -n "1s/.*version \([^ ]*\).*/\1/p") microvm"
echo "  cache=auto (ringvm, virtiofsd); 9p: QEMU virtio-9p, msize=512k, cache=none; tree: $(tar -tf build/bench/tree.tar | wc -l) entries"
bench_table "$out/RESULTS" virtiofsd virtiofsd-tp64
echo
echo "metadata (seconds, guest caches dropped before each step; /virtiofsd = time ratio, < 1 is faster)"
awk -v peers="$peers" '
	$3 == "failed" { t[$1, $2] = "failed"; next }
	$2 == "files" { files[$1] = $3; next }
	{ t[$1, $2] = $3 }
	END {
		n = split(peers, p, " "); split("untar find du stat-storm rm", s, " ")
		printf "%-15s %7s", "peer", "files"; for (i = 1; i <= 5; i++) printf " %13s", s[i]; printf "\n"
		for (j = 1; j <= n; j++) {
			printf "%-15s %7s", p[j], (p[j] in files) ? files[p[j]] : "-"
			for (i = 1; i <= 5; i++) {
				# "in" first: merely reading t[...] would create the entry.
				v = ((p[j], s[i]) in t) ? t[p[j], s[i]] : "failed"
				b = (("virtiofsd", s[i]) in t) ? t["virtiofsd", s[i]] : 0
				if (v != "failed" && b + 0 > 0) v = sprintf("%.2f(%.2f)", v, v / b)
				printf " %13s", v
			}
			printf "\n"
		}
	}' "$out/META"
