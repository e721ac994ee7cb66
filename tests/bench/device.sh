#!/bin/bash
# device.sh: `make bench-device`: the seed threads' experiment run natively. One driver program
# (tests/bench/device/, build/bench/device-driver) plays the guest's virtio-fs or virtio-blk driver as
# a vhost-user front-end against each peer in turn, on the same files, round after round; the host's
# own io_uring on the same file is the limit. See tests/bench/README.md ("make bench-device").
#
# Environment: ROUNDS (3), TIME (s measured per run, 4), WARMUP (s, 1), FILE_MB (1024), TREE_FILES
# (3000), BENCH_DIR (/var/tmp/ringvm-bench-device: on the root disk, so O_DIRECT reaches a disk),
# OUT (build/bench/device), RINGVM ($B/ringvm), DRIVER_CPUS (0), PEER_CPUS (1), HALT_POLL_US (200:
# how long the driver looks for a reply before it sleeps, as KVM's halt-polling), PEERS / WORKLOADS
# (space-separated names to keep; default all),
# BENCH_QUICK=1 (briefly, once: ringvm's peers and the host on every workload, the other peers on one
# row of each workload kind, QUICK_PEER_ROWS; a check of the harness, never a speed verdict),
# TAP=1 (print TAP: one check per run and per output; `make test` uses BENCH_QUICK=1 TAP=1).
# Output in build/bench/device/ (quick mode: build/bench/device-quick/): results.jsonl (one line per run), summary.json, goals.json, tables.txt, one PNG
# per workload, and each peer's log.
set -u
cd "$(dirname "$0")/../.." || exit 1
root=$(pwd)
B=${B:-build}
driver=$root/$B/bench/device-driver
quick=${BENCH_QUICK:-0}
# The quick mode keeps its own files and results, so `make test` never clobbers a full run's.
suffix=""
[ "$quick" = 1 ] && suffix=-quick
out=${OUT:-$root/build/bench/device$suffix}
if [ "$quick" = 1 ]; then
	rounds=${ROUNDS:-1} time=${TIME:-0.3} warmup=${WARMUP:-0.1} file_mb=${FILE_MB:-64}
else
	rounds=${ROUNDS:-3} time=${TIME:-4} warmup=${WARMUP:-1} file_mb=${FILE_MB:-1024}
fi
tree_files=${TREE_FILES:-3000}
# The driver waits for a reply as a KVM guest's vCPU does: halt-polling first (KVM's halt_poll_ns
# default, 200 us), then asleep on the call eventfd (0: asleep at once). The same for every peer.
halt_poll_us=${HALT_POLL_US:-200}
dir=${BENCH_DIR:-/var/tmp/ringvm-bench-device$suffix}
driver_cpus=${DRIVER_CPUS:-0}
peer_cpus=${PEER_CPUS:-1}
tap=${TAP:-0}
# The driver measures a cache line's round trip to the peer's (first) CPU before each run (probe.h):
# this host's speed moves with it.
probe_cpu=$(sed -E 's/^([0-9]+).*/\1/' <<<"$peer_cpus")
[[ $probe_cpu =~ ^[0-9]+$ ]] || probe_cpu=""
# The host's modes: on this host the round trip flips between ~60-105 and ~320-550 ns and every
# peer's rate follows it (tests/bench/README.md, "The host's modes"): runs in the two modes do not
# compare. A run's mode is fast when the round trip before and after it was at most MODE_FACTOR (2)
# x the fewest nanoseconds probed so far in this benchmark, its own probes included (MODE_RTT_NS: a
# fixed gate; 0: none), slow when both were above, and mixed when the host changed mode during the
# run. The first run of a row in a round that is not mixed sets the row's mode for that round,
# whichever the host is in; the row's other peers wait up to MODE_WAIT_S for that mode before they
# start. A run that ended mixed runs again, MODE_RERUNS times at most (the run redone stays in
# results.jsonl as "redone"); one that ended in the other mode after a wait in vain takes the row
# along. So each round compares a row's peers in one mode, and a host that sits in its slow mode for
# an hour still gives tables (marked slow) instead of a wait for the fast one.
# A host without modes never waits: its round trip stays within 2x of its fewest.
# The quick mode's gate is wide open (1000 x): its runs check the harness, and a busy machine must
# not leave them all out of the tables; the gate's paths have a check of their own there.
if [ "$quick" = 1 ]; then
	mode_wait_s=${MODE_WAIT_S:-0} mode_reruns=${MODE_RERUNS:-0} mode_calibrate_s=0.3 mode_factor=${MODE_FACTOR:-1000}
else
	mode_wait_s=${MODE_WAIT_S:-10} mode_reruns=${MODE_RERUNS:-2} mode_calibrate_s=3 mode_factor=${MODE_FACTOR:-2}
fi
mode_fixed=${MODE_RTT_NS:-}
mode_min= # the fewest ns of a round trip probed so far
row_mode= # the mode (fast or slow) of the current row in the current round; empty until a run sets it
untar_moves=0 # untar runs whose files were moved aside (run_attempt)
sock=$out/peer.sock
rs_dir=$root/build/bench/peers/virtiofsd-rs
ringvm=${RINGVM:-$root/$B/ringvm}

# The peers: name, target (fs, blk or host), how it is made to do direct I/O on the O_DIRECT rows,
# and its start command. In the command @SOCK@, @DIR@ (the shared directory), @FILE@ (the data file,
# the disk of the blk peers), @Q@ (queues the run needs) and @DIRECT@ (on for O_DIRECT rows, else off)
# are replaced. A peer is one line; ringvm's lines run once `ringvm serve` exists in the build.
PEER_TABLE="
virtiofsd-c|fs|FUSE OPEN with O_DIRECT, kept by -o allow_direct_io|env GLIBC_TUNABLES=glibc.malloc.arena_max=8 /usr/lib/qemu/virtiofsd --socket-path=@SOCK@ -o source=@DIR@ -o cache=auto -o allow_direct_io --thread-pool-size=0
virtiofsd-c-tp64|fs|FUSE OPEN with O_DIRECT, kept by -o allow_direct_io|env GLIBC_TUNABLES=glibc.malloc.arena_max=8 /usr/lib/qemu/virtiofsd --socket-path=@SOCK@ -o source=@DIR@ -o cache=auto -o allow_direct_io --thread-pool-size=64
virtiofsd-rs|fs|FUSE OPEN with O_DIRECT, kept by --allow-direct-io|$rs_dir/virtiofsd --socket-path=@SOCK@ --shared-dir=@DIR@ --tag=bench --cache=auto --allow-direct-io
virtiofsd-rs-tp64|fs|FUSE OPEN with O_DIRECT, kept by --allow-direct-io|$rs_dir/virtiofsd --socket-path=@SOCK@ --shared-dir=@DIR@ --tag=bench --cache=auto --allow-direct-io --thread-pool-size=64
ringvm-fs|fs|FUSE OPEN with O_DIRECT, kept by --allow-direct-io (one configuration for every row)|$ringvm serve fs --socket @SOCK@ --shared-dir @DIR@ --queues @Q@ --allow-direct-io
qsd|blk|cache.direct=on (one iothread: QEMU 7.2 has no per-queue iothreads for exports)|qemu-storage-daemon --object iothread,id=io0 --blockdev driver=file,filename=@FILE@,node-name=disk,aio=io_uring,cache.direct=@DIRECT@ --export type=vhost-user-blk,id=exp,node-name=disk,addr.type=unix,addr.path=@SOCK@,writable=on,num-queues=@Q@,iothread=io0
ringvm-blk|blk|--disk ...,direct=on|$ringvm serve blk --socket @SOCK@ --disk @FILE@,queues=@Q@,direct=@DIRECT@
host|host|the file opened O_DIRECT|-
"

# The workloads: name, targets it applies to, driver workload, request bytes, depth, jobs, direct.
# randwrite-user: randwrite by a guest user (uid 1000) without CAP_FSETID, whose writes Linux marks
# for the server's setuid/setgid kill (FUSE_WRITE_KILL_SUIDGID) when the server offers
# FUSE_HANDLE_KILLPRIV_V2: what a build or any program run as a user in the guest writes.
# Page-cache rows first, then O_DIRECT rows (whose runs drop the file from the cache).
WORKLOAD_TABLE="
rr-cache-qd1|fs blk host|randread|4096|1|1|0
rr-cache-qd16|fs blk host|randread|4096|16|1|0
rr-cache-qd64|fs blk host|randread|4096|64|1|0
rr-cache-qd1-j4|fs blk host|randread|4096|1|4|0
rr-cache-qd16-j4|fs blk host|randread|4096|16|4|0
rr-cache-qd64-j4|fs blk host|randread|4096|64|4|0
rw-cache-qd1|fs blk host|randwrite|4096|1|1|0
rw-cache-qd16|fs blk host|randwrite|4096|16|1|0
rw-user-qd1|fs|randwrite-user|4096|1|1|0
rw-user-qd16|fs|randwrite-user|4096|16|1|0
seq128k-qd16|fs blk host|seqread|131072|16|1|0
meta-qd1|fs|meta|4096|1|1|0
meta-qd16|fs|meta|4096|16|1|0
untar-qd1|fs|untar|4096|1|1|0
untar-qd16|fs|untar|4096|16|1|0
rr-direct-qd1|fs blk host|randread|4096|1|1|1
rr-direct-qd16|fs blk host|randread|4096|16|1|1
rr-direct-qd64|fs blk host|randread|4096|64|1|1
rr-direct-qd1-j4|fs blk host|randread|4096|1|4|1
rr-direct-qd16-j4|fs blk host|randread|4096|16|4|1
rr-direct-qd64-j4|fs blk host|randread|4096|64|4|1
"

# BENCH_QUICK=1: the rows the peers other than ringvm's run (QUICK_PEER_ROWS overrides).
quick_peer_rows="rr-cache-qd16 rw-cache-qd1 rw-user-qd16 seq128k-qd16 meta-qd16 untar-qd1 rr-direct-qd16-j4"
checks=0
failures=0
say() { echo "# $*"; }
check() { # check OK|FAIL|SKIP DESCRIPTION [REASON]
	checks=$((checks + 1))
	[ "$tap" = 1 ] || return 0
	case $1 in
	OK) echo "ok $checks - $2" ;;
	SKIP) echo "ok $checks - $2 # SKIP $3" ;;
	*) echo "not ok $checks - $2${3:+: $3}" ;;
	esac
}

selected() { # selected LIST NAME: true when LIST is empty or has NAME
	[ -z "$1" ] && return 0
	case " $1 " in *" $2 "*) return 0 ;; esac
	return 1
}

mkdir -p "$out"
rm -f "$out"/*.log "$out"/*.png "$out/results.jsonl" "$out/summary.json" "$out/goals.json" "$out/tables.txt"
# The untar runs' files (run_one), from this run at its end, from one that died at its start.
rm -rf "$dir"/untar-done.*
trap 'rm -rf "$dir"/untar-done.*' EXIT
# A copy of the driver: a rebuild during a long run does not change it under the run.
cp "$driver" "$out/device-driver" 2>/dev/null && driver=$out/device-driver

# --- what the peers need; a peer that cannot start is reported, never dropped ---
declare -A unavailable=()
if [ ! -x "$driver" ]; then
	echo "device.sh: $driver is missing (make $B/bench/device-driver)" >&2
	exit 1
fi
[ -x "$rs_dir/virtiofsd" ] || tests/bench/peers/fetch-virtiofsd-rs.sh "$rs_dir" >"$out/fetch-virtiofsd-rs.log" 2>&1 ||
	unavailable[virtiofsd-rs]="the Rust virtiofsd could not be fetched (see $out/fetch-virtiofsd-rs.log)"
[ -x "$rs_dir/virtiofsd" ] || unavailable[virtiofsd-rs-tp64]=${unavailable[virtiofsd-rs]:-}
[ -x /usr/lib/qemu/virtiofsd ] || unavailable[virtiofsd-c]="/usr/lib/qemu/virtiofsd missing (qemu-system-common)"
[ -x /usr/lib/qemu/virtiofsd ] || unavailable[virtiofsd-c-tp64]=${unavailable[virtiofsd-c]}
command -v qemu-storage-daemon >/dev/null || unavailable[qsd]="qemu-storage-daemon missing (qemu-system-common)"
# ringvm serves vhost-user once its `serve` command exists; until then its rows are skipped, and say so.
if ! "$ringvm" serve --help >/dev/null 2>&1; then
	unavailable[ringvm-fs]="skip:$ringvm has no 'serve' command (vhost-user back-end not in this build)"
	unavailable[ringvm-blk]=${unavailable[ringvm-fs]}
fi

# --- hygiene: what else the machine is doing, and how the threads are pinned ---
versions=$(
	echo "virtiofsd-c: $(/usr/lib/qemu/virtiofsd --version 2>&1 | head -n1)"
	echo "virtiofsd-rs: $(cat "$rs_dir/version" 2>/dev/null || echo none)"
	echo "qsd: $(qemu-storage-daemon --version 2>/dev/null | head -n1)"
	echo "kernel: $(uname -r), $(nproc) CPUs"
)
versions+=$'\n'"pinning: driver on CPU $driver_cpus, peer on CPU $peer_cpus (taskset); /dev/cpu_dma_latency held at 0 by the driver during each run (the tables say whether it could)"
versions+=$'\n'"the driver halt-polls ${halt_poll_us} us for a reply before it sleeps on the call eventfd (as KVM does for a halted vCPU)"
versions+=$'\n'"load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$quick" = 1 ] && say "BENCH_QUICK=1: a check of the harness, not a measurement"

if ! "$driver" prepare --dir "$dir" --file-mb "$file_mb" --tree-files "$tree_files" --jobs 4; then
	check FAIL "prepare the files in $dir"
	exit 1
fi
versions+=$'\n'"rounds $rounds, $time s per run after $warmup s warm-up, data file $file_mb MiB, tree $tree_files files, in $dir"
# The host's modes at the start (probe.h): the gate starts from the fewest.
if [ -n "$probe_cpu" ] && [ "$probe_cpu" != "$driver_cpus" ] && [ "$mode_fixed" != 0 ]; then
	if calib=$(taskset -c "$driver_cpus" "$driver" probe --probe-cpu "$probe_cpu" --time "$mode_calibrate_s" 2>"$out/driver.err"); then
		[ -n "$mode_fixed" ] || mode_min=$(jq -r .xcpu_rtt_ns_min <<<"$calib")
		versions+=$'\n'"cross-CPU round trip at the start ($mode_calibrate_s s): $(jq -r '"fewest \(.xcpu_rtt_ns_min), median \(.xcpu_rtt_ns_median), most \(.xcpu_rtt_ns_max) ns over \(.probes) probes"' <<<"$calib")"
		versions+=$'\n'"a run is in the fast mode when the round trip before and after it is at most ${mode_fixed:-$mode_factor x the fewest seen so far} (ns), slow when both are above; a row's peers of one round run in the mode its first run found (the driver waits up to $mode_wait_s s for it; a run that changed mode runs again, $mode_reruns times at most; one in the other mode after a wait in vain takes the row along)"
	else
		check FAIL "the host probe at the start" "$(head -c 200 "$out/driver.err")"
		failures=$((failures + 1))
	fi
fi
while read -r line; do say "$line"; done <<<"$versions"

# start_peer NAME CMD DIRECT QUEUES [DIR]: start it pinned, in the background, serving DIR (default
# the bench directory); echo its pid.
start_peer() {
	local cmd=$2 d=${5:-$dir}
	cmd=${cmd//@SOCK@/$sock}
	cmd=${cmd//@DIR@/$d}
	cmd=${cmd//@FILE@/$d/data}
	cmd=${cmd//@Q@/$4}
	cmd=${cmd//@DIRECT@/$3}
	rm -f "$sock"
	echo "+ $cmd" >>"$out/$1.log"
	# shellcheck disable=SC2086 # the command line is split on purpose
	taskset -c "$peer_cpus" $cmd >>"$out/$1.log" 2>&1 &
	echo $!
}

# stop_peer PID: end it (most vhost-user back-ends exit by themselves when the front-end leaves).
stop_peer() {
	local pid=$1 i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$pid" 2>/dev/null || break
		[ "$i" = 3 ] && kill "$pid" 2>/dev/null
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# mode_gate: the round trip (ns, whole) a run must stay within; empty when there is no gate.
mode_gate() {
	if [ -n "$mode_fixed" ]; then
		[ "$mode_fixed" = 0 ] || echo "$mode_fixed"
	elif [ -n "$mode_min" ] && [ -n "$probe_cpu" ]; then
		awk -v m="$mode_min" -v f="$mode_factor" 'BEGIN { printf "%d\n", m * f + 0.5 }'
	fi
}

# run_mode GATE: fast, slow or mixed, for the run in run_line (its round trip before and after it).
run_mode() {
	jq -r -L "$root/tests/bench" --argjson g "$1" 'include "device-mode"; host_mode($g)' <<<"$run_line"
}

# run_one ROUND PEER TARGET HOW CMD ROW WORKLOAD BS DEPTH JOBS DIRECT: one run (again while it ended
# mixed or off the row's mode for the round, MODE_RERUNS times at most), one JSON line per run in
# results.jsonl: host_mode (fast, slow, mixed) and in_mode (in the row's mode: counted).
run_one() {
	local attempt gate mode in_mode why
	for attempt in $(seq 0 "$mode_reruns"); do
		gate=$(mode_gate) # the driver waits for the row's mode by it (run_attempt)
		run_attempt "$@"
		if [ -z "$gate" ] || [ "$(jq -r .status <<<"$run_line")" != ok ]; then
			echo "$run_line" >>"$out/results.jsonl"
			return 0
		fi
		# The fewest ns seen so far, this run's probes included: the gate between the modes follows
		# the fastest the benchmark met, and a run whose one probe was the first of the fast mode
		# seen is judged by it (mixed), not by the gate from before.
		mode_min=$(jq -r --argjson m "${mode_min:-1e9}" '[$m, .xcpu_rtt_ns, .xcpu_rtt_after_ns] | map(select(. != null)) | min' <<<"$run_line")
		gate=$(mode_gate)
		mode=$(run_mode "$gate")
		in_mode=false
		if [ "$mode" != mixed ] && { [ -z "$row_mode" ] || [ "$mode" = "$row_mode" ] ||
			jq -e --argjson w "$mode_wait_s" '.mode_waited_s != null and .mode_waited_s >= $w' <<<"$run_line" >/dev/null; }; then
			# The row's mode, or the host stayed away from it for the whole wait: the row follows
			# the host from this run on (its runs in the old mode keep their figures, in that mode).
			in_mode=true
			row_mode=$mode
		fi
		if [ "$in_mode" = true ] || [ "$attempt" = "$mode_reruns" ]; then
			jq -c --argjson g "$gate" --arg mode "$mode" --argjson m "$in_mode" --argjson a "$attempt" \
				'. + {mode_gate_ns: $g, host_mode: $mode, in_mode: $m, mode_attempt: $a}' <<<"$run_line" >>"$out/results.jsonl"
			return 0
		fi
		if [ "$mode" = mixed ]; then
			why="the host changed mode during the run"
		else
			why="the run was in the host's $mode mode, this row's other runs of the round in its $row_mode mode"
		fi
		jq -c --argjson g "$gate" --arg mode "$mode" --argjson a "$attempt" --arg why "$why" \
			'. + {status: "redone", mode_gate_ns: $g, host_mode: $mode, in_mode: false, mode_attempt: $a,
			why: "\($why): round trip \(.xcpu_rtt_ns) ns before, \(.xcpu_rtt_after_ns) after, gate \($g)"}' \
			<<<"$run_line" >>"$out/results.jsonl"
	done
}

# run_attempt ROUND PEER TARGET HOW CMD ROW WORKLOAD BS DEPTH JOBS DIRECT: one run; its JSON line in
# run_line (run_one writes it, with the mode gate's verdict).
run_line=
run_attempt() {
	local round=$1 peer=$2 target=$3 how=$4 cmd=$5 row=$6 wl=$7 bs=$8 depth=$9 jobs=${10} direct=${11}
	local pid="" rc args=() err json dflag=off cache=warm
	if [ "$wl" = randwrite-user ]; then
		wl=randwrite
		args+=(--writer-uid 1000)
	fi
	if [ "$direct" = 1 ]; then
		args+=(--direct)
		dflag=on cache=evict
	fi
	if [ "$wl" = untar ]; then
		# The last run's files are moved aside, not removed: ext4 makes every CREATE skip the
		# inodes deleted in the last minute (five when their table block is dirty), which
		# took most of a CREATE's time and made each untar run as slow as the one before it
		# was fast. They go when the benchmark ends.
		if ! { [ ! -e "$dir/untar" ] || mv "$dir/untar" "$dir/untar-done.$((untar_moves += 1))"; } ||
			! "$driver" prepare --dir "$dir" --file-mb "$file_mb" --tree-files "$tree_files" --jobs 4 \
				>"$out/driver.err" 2>&1; then
			err=$(tr '\n' ' ' <"$out/driver.err" | cut -c1-300)
			run_line=$(jq -nc --arg peer "$peer" --arg row "$row" --argjson round "$round" --arg why "prepare: $err" \
				'{peer: $peer, row: $row, round: $round, status: "failed", why: $why}')
			check FAIL "round $round $peer $row" "the untar run's tree could not be prepared: $err"
			failures=$((failures + 1))
			return 0
		fi
	fi
	# A write run sets its own page cache (the driver's --cache pages): the file evicted, written
	# over in 4 KiB pieces and written back, so every write run starts from clean pages in 4 KiB
	# folios. Dirty pages left under writeback made every write of the next run wait for the disk
	# (one round's rates spanned 10k-107k IOPS), and a 4 KiB write into the large folios readahead
	# leaves costs ext4 about ten times a server's own work, for every server alike (README, "The page
	# cache's state").
	[ "$wl" = randwrite ] && cache=pages
	if [ "$target" != host ]; then
		pid=$(start_peer "$peer" "$cmd" "$dflag" "$jobs")
		args+=(--socket "$sock" --cpu-pid "$pid")
	fi
	[ -n "$probe_cpu" ] && args+=(--probe-cpu "$probe_cpu")
	if [ -n "$probe_cpu" ] && [ -n "$gate" ] && [ -n "$row_mode" ]; then
		args+=(--mode-rtt-ns "$gate" --mode-wait-s "$mode_wait_s")
		[ "$row_mode" = slow ] && args+=(--mode-slow)
	fi
	json=$(taskset -c "$driver_cpus" "$driver" run --peer "$peer" --target "$target" --file "$dir/data" \
		--workload "$wl" --bs "$bs" --depth "$depth" --jobs "$jobs" --time "$time" --warmup "$warmup" \
		--tree-files "$tree_files" --cache "$cache" --halt-poll-us "$halt_poll_us" \
		"${args[@]}" 2>"$out/driver.err")
	rc=$?
	[ -n "$pid" ] && stop_peer "$pid"
	err=$(sed 's/^device bench: //' "$out/driver.err" | tr '\n' ' ' | sed 's/ *$//' | cut -c1-300)
	cat "$out/driver.err" >>"$out/$peer.log"
	local desc="round $round $peer $row"
	if [ "$rc" = 0 ] && jq -e . >/dev/null 2>&1 <<<"$json"; then
		run_line=$(jq -c --arg row "$row" --argjson round "$round" --arg how "$how" \
			'. + {row: $row, round: $round, status: "ok", direct_how: (if .direct then $how else null end)}' \
			<<<"$json")
		check OK "$desc"
	elif [ "$rc" = 3 ]; then
		# The peer offers fewer queues than the row has jobs: not applicable, said in the table.
		run_line=$(jq -nc --arg peer "$peer" --arg row "$row" --argjson round "$round" --arg why "$err" \
			'{peer: $peer, row: $row, round: $round, status: "n/a", why: $why}')
		check OK "$desc (n/a: $err)"
	else
		run_line=$(jq -nc --arg peer "$peer" --arg row "$row" --argjson round "$round" --arg why "exit $rc: $err" \
			'{peer: $peer, row: $row, round: $round, status: "failed", why: $why}')
		check FAIL "$desc" "exit $rc: $err"
		failures=$((failures + 1))
		echo "device.sh: $desc failed (exit $rc): $err" >&2
	fi
	return 0
}

[ "$tap" = 1 ] && echo "# TAP from tests/bench/device.sh"

# The checks can fail: a peer serving a zero-filled copy of the data file must be caught by the driver's
# data check (once per kind of device, in the quick mode that `make test` runs).
if [ "$quick" = 1 ]; then
	wrong=$out/wrong
	mkdir -p "$wrong" && rm -f "$wrong/data" && truncate -s "$((file_mb << 20))" "$wrong/data"
	while IFS='|' read -r peer target how cmd; do
		case $peer in virtiofsd-c | qsd) ;; *) continue ;; esac
		[ -z "${unavailable[$peer]:-}" ] || continue
		pid=$(start_peer "$peer" "$cmd" off 1 "$wrong")
		taskset -c "$driver_cpus" "$driver" run --peer "$peer" --target "$target" --file "$dir/data" \
			--workload randread --time 0.2 --warmup 0 --socket "$sock" >/dev/null 2>"$out/driver.err"
		rc=$?
		stop_peer "$pid"
		if [ "$rc" = 1 ] && grep -q "wrong data" "$out/driver.err"; then
			check OK "$peer serving zeros: the driver reports wrong data"
		else
			check FAIL "$peer serving zeros" "driver exit $rc: $(head -c 200 "$out/driver.err")"
			failures=$((failures + 1))
		fi
	done <<<"$PEER_TABLE"
	rm -rf "$wrong"
fi

# The mode gate's paths (quick mode; into a results file of its own). First through the driver, with
# gates that put every probe on one side: at 1 ns every run is slow. The row's first run sets its
# mode (slow, counted, no wait); the next waits for the slow mode, there at once, and counts. With a
# gate no probe exceeds (1 s: every run fast) the driver waits its MODE_WAIT_S for the slow mode in
# vain: the row follows the host, and the run counts in the fast mode. Then run_one's verdicts on
# made-up probes (run_attempt replaced), with the gate at 2x the fewest seen: 400/410 ns sets the
# row fast (gate 800); 400/90 ns lowers the gate to 180 and is mixed, redone; 95/92 counts; 400/420
# after a wait that timed out makes the row slow.
if [ "$quick" = 1 ] && [ -n "$probe_cpu" ] && [ "$probe_cpu" != "$driver_cpus" ]; then
	saved=("$out" "$mode_fixed" "$mode_reruns" "$mode_wait_s" "$mode_min" "$mode_factor")
	out=$out/mode-check mode_fixed=1 mode_reruns=1 mode_wait_s=0.2 row_mode=
	mkdir -p "$out" && rm -f "$out/results.jsonl"
	run_one 0 host host - - rr-cache-qd1 randread 4096 1 1 0 </dev/null
	run_one 0 host host - - rr-cache-qd1 randread 4096 1 1 0 </dev/null
	mode_fixed=1000000000
	run_one 0 host host - - rr-cache-qd1 randread 4096 1 1 0 </dev/null
	if jq -se 'length == 3 and
		(.[0] | .status == "ok" and .host_mode == "slow" and .in_mode == true and .mode_waited_s == null) and
		(.[1] | .status == "ok" and .host_mode == "slow" and .in_mode == true and .mode_waited_for == "slow") and
		(.[2] | .status == "ok" and .host_mode == "fast" and .in_mode == true and .mode_attempt == 0 and
			.mode_gate_ns == 1000000000 and .mode_waited_for == "slow" and .mode_waited_s >= 0.2)' \
		"$out/results.jsonl" >/dev/null 2>&1; then
		check OK "the mode gate, through the driver: a row's first run sets its mode; the next waits for it; a host that stays away from it for the whole wait takes the row along"
	else
		check FAIL "the mode gate, through the driver" "$(head -c 600 "$out/results.jsonl" 2>/dev/null)"
	fi
	rm -f "$out/results.jsonl"
	saved_attempt=$(declare -f run_attempt)
	fake=('{"status":"ok","xcpu_rtt_ns":400,"xcpu_rtt_after_ns":410}'
		'{"status":"ok","xcpu_rtt_ns":400,"xcpu_rtt_after_ns":90,"mode_waited_s":0.05}'
		'{"status":"ok","xcpu_rtt_ns":95,"xcpu_rtt_after_ns":92,"mode_waited_s":0.05}'
		'{"status":"ok","xcpu_rtt_ns":400,"xcpu_rtt_after_ns":420,"mode_waited_s":0.2}')
	fake_next=0
	run_attempt() { run_line=${fake[fake_next]}; fake_next=$((fake_next + 1)); }
	mode_fixed= mode_min=1000000 mode_factor=2 row_mode=
	for i in 1 2 3; do run_one 0 fake fs - - rr-cache-qd1 randread 4096 1 1 0; done
	eval "$saved_attempt"
	if jq -se 'map([.status, .host_mode, .in_mode, .mode_gate_ns]) ==
		[["ok", "fast", true, 800], ["redone", "mixed", false, 180], ["ok", "fast", true, 180],
		 ["ok", "slow", true, 180]] and (.[1].why | test("changed mode during the run"))' \
		"$out/results.jsonl" >/dev/null 2>&1; then
		check OK "the mode gate's verdicts: a run's own probes move the gate; a mixed run is redone; a wait in vain makes the row follow the host"
	else
		check FAIL "the mode gate's verdicts" "$(jq -sc 'map([.status, .host_mode, .in_mode, .mode_gate_ns])' "$out/results.jsonl" 2>&1 | head -c 400)"
	fi
	out=${saved[0]} mode_fixed=${saved[1]} mode_reruns=${saved[2]} mode_wait_s=${saved[3]} mode_min=${saved[4]} mode_factor=${saved[5]} row_mode=
fi

for round in $(seq 1 "$rounds"); do
	say "round $round of $rounds"
	while IFS='|' read -r row targets wl bs depth jobs direct; do
		[ -n "$row" ] || continue
		selected "${WORKLOADS:-}" "$row" || continue
		# Alternate the peers' order from round to round, so no peer always runs right after another.
		peers=$(grep -v '^$' <<<"$PEER_TABLE")
		[ $((round % 2)) = 0 ] && peers=$(tac <<<"$peers")
		row_mode=
		while IFS='|' read -r peer target how cmd; do
			[[ " $targets " == *" $target "* ]] || continue
			selected "${PEERS:-}" "$peer" || continue
			# The quick mode checks the harness and ringvm: ringvm's peers and the host run every
			# row, the other peers one row of each workload kind (their start and I/O paths).
			if [ "$quick" = 1 ]; then
				case $peer in ringvm-* | host) ;; *) selected "${QUICK_PEER_ROWS:-$quick_peer_rows}" "$row" || continue ;; esac
			fi
			if [ -n "${unavailable[$peer]:-}" ]; then
				why=${unavailable[$peer]}
				if [ "$round" = 1 ]; then
					case $why in
					skip:*) check SKIP "$peer $row" "${why#skip:}" ;;
					*)
						check FAIL "$peer $row" "$why"
						failures=$((failures + 1))
						echo "device.sh: $peer cannot run: $why" >&2
						;;
					esac
				fi
				jq -nc --arg peer "$peer" --arg row "$row" --argjson round "$round" --arg why "${why#skip:}" \
					'{peer: $peer, row: $row, round: $round, status: "unavailable", why: $why}' \
					>>"$out/results.jsonl"
				continue
			fi
			run_one "$round" "$peer" "$target" "$how" "$cmd" "$row" "$wl" "$bs" "$depth" "$jobs" "$direct" </dev/null
		done <<<"$peers"
	done <<<"$WORKLOAD_TABLE"
done

# The rows of a guest user's writes: each of ringvm's runs wrote as uid 1000 with the kill flag
# (ringvm offers FUSE_HANDLE_KILLPRIV_V2), so its path that leaves the kill to the host kernel ran.
if jq -se 'any(.[]; .status == "ok" and .peer == "ringvm-fs" and (.row | startswith("rw-user-")))' \
	"$out/results.jsonl" >/dev/null 2>&1; then
	if jq -se 'map(select(.status == "ok" and .peer == "ringvm-fs" and (.row | startswith("rw-user-")))) |
		all(.[]; .writer_uid == 1000 and .killpriv_v2 == true)' "$out/results.jsonl" >/dev/null 2>&1; then
		check OK "ringvm-fs's rw-user runs wrote as uid 1000 with FUSE_WRITE_KILL_SUIDGID (KILLPRIV_V2 agreed)"
	else
		check FAIL "ringvm-fs's rw-user runs" "a run without writer_uid 1000 or with killpriv_v2 not agreed"
		failures=$((failures + 1))
	fi
fi
tests/bench/device-report.sh "$out" "$versions"
rc=$?
if [ "$rc" = 0 ] && jq -e 'length > 0' "$out/summary.json" >/dev/null 2>&1; then
	check OK "summary.json parses and has rows"
else
	check FAIL "summary.json" "the report failed (exit $rc)"
fi
# The host probe (probe.h) ran before every run: a number, not null, on each run's line.
if [ -n "$probe_cpu" ] && [ "$probe_cpu" != "$driver_cpus" ]; then
	if jq -se 'map(select(.status == "ok")) | length > 0 and
		all(.[]; (.xcpu_rtt_ns | type) == "number" and .xcpu_rtt_ns > 0 and (.syscall_ns | type) == "number" and
			(.xcpu_rtt_after_ns | type) == "number" and .xcpu_rtt_after_ns > 0 and
			(.mode_gate_ns | type) == "number" and (.in_mode | type) == "boolean" and
			(.host_mode | IN("fast", "slow", "mixed")))' \
		"$out/results.jsonl" >/dev/null 2>&1; then
		check OK "every run measured the host before and after (cross-CPU round trip to CPU $probe_cpu, a system call) and was judged in or off its row's mode"
	else
		check FAIL "the host probe" "a run's line has no xcpu_rtt_ns, xcpu_rtt_after_ns, syscall_ns, mode_gate_ns, host_mode or in_mode"
	fi
fi
if jq -e 'length > 0 and all(.[]; .verdict == "met" or .verdict == "missed" or .verdict == "n/a")' \
	"$out/goals.json" >/dev/null 2>&1; then
	check OK "goals.json parses, every goal met, missed or n/a"
else
	check FAIL "goals.json" "missing, empty or a verdict that is none of met, missed, n/a"
fi
shopt -s nullglob
for png in "$out"/*.png; do
	if [ -s "$png" ] && [ "$(head -c 4 "$png" | tail -c 3)" = PNG ]; then
		check OK "chart $(basename "$png")"
	else
		check FAIL "chart $(basename "$png")" "missing or not a PNG"
	fi
done
[ "$tap" = 1 ] && echo "1..$checks"
if [ "$tap" != 1 ]; then
	cat "$out/tables.txt"
	echo "results: $out/results.jsonl, $out/summary.json, $out/tables.txt, charts $out/*.png"
fi
# A peer that failed or could not start fails `make bench-device` too (after the tables).
[ "$tap" = 1 ] || [ "$failures" = 0 ]
