# lib.sh: what blk.sh and fs.sh share: the tools initramfs, how to run a peer, how to read fio's results.
# Sourced (bash). Runs where KVM boots a stock kernel (inside the lab here).

BENCH_EXIT_PORT=$(sed -n 's/^#define RINGVM_EXIT_PORT \(0x[0-9a-f]*\)$/\1/p' guest/protocol.h)
BENCH_APPEND="console=ttyS0 quiet loglevel=0 panic=-1"
BENCH_MEM=1G

# The host's idle vCPUs halt deeply (MACHINE-NOTES.md): a wake-up costs ~30 us, which a depth-1 job pays on
# every request. Holding /dev/cpu_dma_latency at 0 keeps them polling while this shell (and its children,
# which inherit fd 9) lives.
bench_hold_latency() {
	if exec 9>/dev/cpu_dma_latency 2>/dev/null && printf '\0\0\0\0' >&9; then
		echo "held at 0"
	else
		echo "NOT held (no /dev/cpu_dma_latency)"
	fi
}

# bench_qemu OUT TIMEOUT KERNEL INITRD CMDLINE QEMU_ARG...: boot a QEMU microvm (virtio-mmio, like ringvm)
# with our PID 1; its console goes to OUT. Returns the guest command's status (isa-debug-exit on the
# exit port turns status S into QEMU's (S << 1) | 1), 124 on timeout, 121 if QEMU failed otherwise.
# QEMU's own failure to start is exit status 1 too, as a guest's status 0 is: it is told apart by
# the error QEMU prints ("qemu-system-x86_64: ..." other than a warning).
bench_qemu() {
	local out=$1 limit=$2 kernel=$3 initrd=$4 cmdline=$5 rc
	shift 5
	timeout -k 5 "$limit" qemu-system-x86_64 -accel kvm -cpu host -M microvm -m "$BENCH_MEM" -smp 1 \
		-nodefaults -no-user-config -display none -serial stdio -no-reboot \
		-global virtio-mmio.force-legacy=false \
		-device "isa-debug-exit,iobase=$BENCH_EXIT_PORT,iosize=1" \
		-kernel "$kernel" -initrd "$initrd" -append "$BENCH_APPEND $cmdline" "$@" \
		</dev/null >"$out" 2>&1
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		return 124
	elif [ $rc = 1 ] && grep -v '^qemu-system-x86_64: warning:' "$out" | grep -q '^qemu-system-x86_64: '; then
		return 121
	elif [ $((rc & 1)) = 1 ] && [ $rc -lt 512 ]; then
		return $((rc >> 1))
	fi
	return 121
}

# bench_ringvm OUT TIMEOUT RINGVM_ARG...: ringvm run with a time limit; its output goes to OUT.
bench_ringvm() {
	local out=$1 limit=$2
	shift 2
	timeout -k 5 "$limit" "${RINGVM:-build/ringvm}" run --memory "$BENCH_MEM" "$@" </dev/null >"$out" 2>&1
}

# bench_results PEER OUT: turn OUT's "RESULT job terse-line" lines into "PEER job iops bw_kib lat_us p99_us".
# Terse v3 fields: read bw 7, iops 8, total latency mean 40, clat p99 18 ("99.000000%=N"); the write
# side is the same list 41 fields later. A job whose read side did nothing is a write job.
bench_results() {
	awk -v peer="$1" '
	/^RESULT / {
		name = $2
		if ($3 == "failed" || NF < 3) { print peer, name, "failed"; next }
		n = split($3, f, ";")
		o = (f[8] + 0 > 0) ? 0 : 41
		if (n < 81 || f[8 + o] + 0 == 0) { print peer, name, "failed"; next }
		p = f[18 + o]; sub(/.*=/, "", p)
		printf "%s %s %.0f %.0f %.1f %.0f\n", peer, name, f[8 + o], f[7 + o], f[40 + o], p
	}' "$2"
}

# bench_table RESULTS BASE1 BASE2: one row per job and peer from bench_results lines, with IOPS ratios
# against peers BASE1 and BASE2 (blank when either side failed). A peer measured several times (rounds)
# shows the median of each column, the IOPS range and the number of rounds; a failed round is left out
# of the median and counted in the last column.
bench_table() {
	awk -v b1="$2" -v b2="$3" '
	function median(list,    n, v, i, j, t) {
		n = split(list, v, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		lo = v[1]; hi = v[n]
		return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	{ key = $1 SUBSEP $2
	  if (!($2 in seenjob)) { seenjob[$2] = 1; jobs[++nj] = $2 }
	  if (!($1 in seenpeer)) { seenpeer[$1] = 1; peers[++np] = $1 }
	  seen[key] = 1
	  if ($3 == "failed") { failed[key]++; next }
	  runs[key]++
	  for (c = 3; c <= 6; c++) col[key, c] = col[key, c] " " $c }
	END {
		for (k in runs) {
			for (c = 3; c <= 6; c++) med[k, c] = median(col[k, c])
			median(col[k, 3]); range[k] = (lo == hi) ? "" : sprintf("%d-%d", lo, hi)
		}
		printf "%-22s %-14s %9s %10s %10s %9s %8s %8s  %-13s %s\n", "job", "peer", "IOPS", "MiB/s", "lat us", "p99 us", "/" b1, "/" b2, "IOPS range", "runs"
		for (j = 1; j <= nj; j++) for (p = 1; p <= np; p++) {
			k = peers[p] SUBSEP jobs[j]
			if (!(k in seen)) continue
			nf = (k in failed) ? sprintf(" (%d failed)", failed[k]) : ""
			if (!(k in runs)) { printf "%-22s %-14s %9s%s\n", jobs[j], peers[p], "failed", nf; continue }
			r1 = ((b1 SUBSEP jobs[j]) in runs) ? med[b1 SUBSEP jobs[j], 3] : 0
			r2 = ((b2 SUBSEP jobs[j]) in runs) ? med[b2 SUBSEP jobs[j], 3] : 0
			printf "%-22s %-14s %9d %10.1f %10.1f %9d %8s %8s  %-13s %d%s\n", jobs[j], peers[p], med[k, 3], med[k, 4] / 1024,
				med[k, 5], med[k, 6], r1 ? sprintf("%.2f", med[k, 3] / r1) : "-", r2 ? sprintf("%.2f", med[k, 3] / r2) : "-",
				range[k], runs[k], nf
		}
	}' "$1"
}
