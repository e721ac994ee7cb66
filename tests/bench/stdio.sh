#!/bin/bash
# stdio.sh: `make bench-stdio`: the command's standard streams, which are virtio-console ports
# (`ringvm run -- cat FILE > /dev/null`, `cat FILE | ringvm run -- sha256sum`), against the same bytes
# read from a virtio-fs share in the same guest, and against the old path of a command's output, the
# serial console (`ringvm run -t`: the command on the 8250 UART, one exit per byte). Issue 11's goals:
# stdout and stdin >= 0.5x the virtio-fs read, stdout >= 100x the serial console. Run through
# tests/with-kvm. Figures, never pass/fail.
#
# Timed inside the guest (peers/guest-stdio.sh reads /proc/uptime around each step), so neither boot
# nor shutdown counts. Each round is one boot with the ports (fs read, fs sha256sum, stdin sha256sum,
# stdout of a copy in the guest's tmpfs) and one boot with -t (the small file on the console); the
# ratios are taken within each round, then their median over ROUNDS. The serial path carries only
# stdout: with -t a stdin that is not a terminal reaches the command as /dev/null, as it always did.
#
# REPORT_ONLY=1: no guest, no KVM: print the tables and redraw the chart from build/bench/stdio/RESULTS
# as it is (an earlier run's, or made-up lines to check this report).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/bench/peers/lib.sh
out=build/bench/stdio
rounds=${ROUNDS:-3}
size=${FILE_MB:-256}
serial_size=${SERIAL_MB:-1} # the console moves tens of KB/s in the lab: a megabyte takes many seconds
limit=${LIMIT:-1800}        # seconds per boot
ringvm=${RINGVM:-build/ringvm}
say() { echo "stdio: $(date +%T) $*" >&2; }

# report: RESULTS ("ROUND NAME BYTES T0 T1 [SHA256]" or "ROUND NAME failed") -> summary.json (medians,
# ranges, per-round ratios), the table on stdout, stdio.png. EXPECT (the data's sha256) marks a step
# whose digest differs as failed: fast and wrong is no figure.
report() {
	awk -v want="${EXPECT:-}" '
	$3 == "failed" || NF < 5 { printf "{\"round\":%d,\"path\":\"%s\",\"ok\":false}\n", $1, $2; next }
	$5 <= $4 { printf "{\"round\":%d,\"path\":\"%s\",\"ok\":false,\"why\":\"under one 10 ms tick\"}\n", $1, $2; next }
	$2 ~ /sha256$/ && want != "" && $6 != want { printf "{\"round\":%d,\"path\":\"%s\",\"ok\":false,\"why\":\"sha256 differs\"}\n", $1, $2; next }
	{ printf "{\"round\":%d,\"path\":\"%s\",\"ok\":true,\"bytes\":%d,\"seconds\":%.2f,\"mbps\":%.6f}\n",
		$1, $2, $3, $5 - $4, $3 / ($5 - $4) / 1e6 }' "$out/RESULTS" >"$out/results.jsonl" || return 1
	# A ratio A/B per round where both ran, then the median over rounds (the same boot for the fs
	# ratios; the next boot for the serial one).
	jq -s '
	def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def rd($n): if . == null then null else . * pow(10; $n) | round / pow(10; $n) end;
	def r3: rd(3);
	. as $all
	| def mbps($p; $r): ($all | map(select(.path == $p and .round == $r and .ok)) | .[0].mbps);
	def ratio($a; $b; $goal): ($all | map(.round) | unique | map(mbps($a; .) as $x | mbps($b; .) as $y
		| if $x != null and $y != null and $y > 0 then $x / $y else empty end)) as $v
		| { ratio: "\($a) / \($b)", median: ($v | median | r3), min: ($v | min | r3), max: ($v | max | r3),
		    rounds: ($v | length), goal: $goal };
	def order: ["fs-read", "stdout", "fs-sha256", "stdin-sha256", "stdout-small", "serial"] as $o
		| sort_by(.[0].path as $p | $o | index($p) // 99);
	{ paths: (group_by(.path) | order | map(map(select(.ok)) as $ok | {
		path: .[0].path, mbps: ($ok | map(.mbps) | median | rd(4)), mbps_min: ($ok | map(.mbps) | min | rd(4)),
		mbps_max: ($ok | map(.mbps) | max | rd(4)), bytes: ($ok[0].bytes // null), runs: ($ok | length),
		failed: (map(select(.ok | not)) | length), why: (map(.why // empty) | unique) })),
	  ratios: [ ratio("stdout"; "fs-read"; 0.5), ratio("stdin-sha256"; "fs-sha256"; 0.5),
		ratio("stdout"; "serial"; 100), ratio("stdout-small"; "serial"; null) ] }' \
		"$out/results.jsonl" >"$out/summary.json" || return 1
	jq -r '
	def f: if . == null then "-" else tostring end;
	(["path", "MB/s", "range", "MiB", "runs", "note"] | @tsv),
	(.paths[] | [.path, (.mbps | f), "\(.mbps_min | f)-\(.mbps_max | f)",
		(if .bytes then .bytes / 1048576 | tostring else "-" end),
		"\(.runs)\(if .failed > 0 then " (\(.failed) failed)" else "" end)", (.why | join(", "))] | @tsv),
	"",
	(["ratio (MB/s)", "median", "range", "rounds", "goal"] | @tsv),
	(.ratios[] | [.ratio, (.median | f), "\(.min | f)-\(.max | f)", .rounds,
		(if .goal then ">= \(.goal)" else "" end)] | @tsv)' "$out/summary.json" | column -t -s $'\t' -L
	# The chart: median MB/s per path with the range over rounds; log scale, the console being ~100x slower.
	jq -r '.paths[] | select(.runs > 0) | "\(.path) \(.mbps) \(.mbps_min) \(.mbps_max)"' \
		"$out/summary.json" >"$out/stdio.dat"
	gnuplot <<EOF 2>>"$out/gnuplot.log" || echo "stdio: no chart (see $out/gnuplot.log)" >&2
set terminal pngcairo size 900,500 noenhanced
set output "$out/stdio.png"
set title "ringvm run: the command's stdio (virtio-console ports) vs virtio-fs vs serial console"
set ylabel "MB/s (median, range over rounds)"
set logscale y
set style fill solid 0.6
set boxwidth 0.6
set xtics rotate by -30
set grid ytics
plot "$out/stdio.dat" using 0:2:xtic(1) with boxes notitle, "" using 0:2:3:4 with yerrorbars lc rgb "black" pt 0 notitle
EOF
	rm -f "$out/stdio.dat"
}

if [ -n "${REPORT_ONLY:-}" ]; then
	[ -s "$out/RESULTS" ] || { echo "stdio: no $out/RESULTS to report on" >&2; exit 1; }
	report
	exit
fi

case $rounds$size$serial_size$limit in
*[!0-9]*) echo "stdio: ROUNDS, FILE_MB, SERIAL_MB and LIMIT must be whole numbers" >&2; exit 2 ;;
esac
mkdir -p "$out" && rm -f "$out"/*
# /var/tmp: L1's tmpfs (the lab's /tmp is the host's, over 9p): the file and the share are in memory.
data=$(mktemp -d /var/tmp/ringvm-bench-stdio.XXXXXX) || exit 1
trap 'rm -rf "$data"' EXIT
bench_hold_latency >"$data/latency" # in this shell, not a $(...) subshell: the fd must stay open
latency=$(cat "$data/latency")
share=$data/share
mkdir -p "$share/out" && cp tests/bench/peers/guest-stdio.sh "$share/" || exit 1
say "prepare: ${size} MiB and ${serial_size} MiB of random bytes"
dd if=/dev/urandom of="$share/data.bin" bs=1M count="$size" status=none &&
	head -c $((serial_size << 20)) "$share/data.bin" >"$share/small.bin" || exit 1
EXPECT=$(sha256sum <"$share/data.bin" | cut -d' ' -f1)
opts=(--memory "$BENCH_MEM" --share "$share:/mnt/share")
for round in $(seq 1 "$rounds"); do
	say "round $round/$rounds: the ports"
	# stdin is the file through a pipe, stdout goes nowhere: the two directions of issue 11's benchmark.
	# shellcheck disable=SC2002 # the pipe is the point: a pipe, not a file, is the stdin being measured
	cat "$share/data.bin" | timeout -k 5 "$limit" "$ringvm" run "${opts[@]}" -- \
		sh /mnt/share/guest-stdio.sh stdio "$round" >/dev/null 2>"$out/stdio.$round.log"
	echo "# status $?" >>"$out/stdio.$round.log"
	say "round $round/$rounds: the serial console"
	timeout -k 5 "$limit" "$ringvm" run -t "${opts[@]}" -- sh /mnt/share/guest-stdio.sh serial "$round" \
		</dev/null >/dev/null 2>"$out/serial.$round.log"
	echo "# status $?" >>"$out/serial.$round.log"
	# A boot that died before a step leaves no line for it: it counts as failed.
	for name in fs-read fs-sha256 stdin-sha256 stdout stdout-small serial; do
		line=$(grep -h "^$name " "$share/out/"*".$round" 2>/dev/null | head -n 1)
		echo "$round ${line:-$name failed}" >>"$out/RESULTS"
	done
done
echo "bench-stdio: ${size} MiB through the ports and virtio-fs, ${serial_size} MiB through the console, $rounds rounds;"
echo "  guest: 1 vCPU, $BENCH_MEM, kernel $(cat build/guest/kernel/version 2>/dev/null);" \
	"host: $(uname -r), $(nproc) CPUs; /dev/cpu_dma_latency $latency; share cache=auto, guest caches dropped per step"
EXPECT=$EXPECT report
