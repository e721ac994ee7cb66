#!/bin/bash
# device-report.sh OUTDIR [HEADER]: turn OUTDIR/results.jsonl (one line per run of tests/bench/device.sh)
# into OUTDIR/summary.json (medians and ranges over the rounds, ratios to the best peer),
# OUTDIR/goals.json (issue 10's goals, met or missed: device-goals.jq),
# OUTDIR/tables.txt (one table per workload, then the goals) and OUTDIR/<row>.png (one chart per workload, gnuplot).
# HEADER (peer versions, ...) opens tables.txt. Exit 0, or 1 when the results cannot be read.
set -u
out=$1
header=${2:-}
results=$out/results.jsonl
[ -s "$results" ] || { echo "device-report: no $results" >&2; exit 1; }

# Each run's host mode, judged again with the lowest gate the benchmark used (device.sh's gate follows
# the fewest round trip seen so far: a benchmark that started in the host's slow mode called its
# first runs fast until it met the fast mode). A counted run whose probes now fall on both sides of
# that gate changed mode during the run: it is counted no more (in_mode false). Lines without a gate
# or without probes stay as they are.
judged=$(mktemp) || exit 1
trap 'rm -f "$judged"' EXIT
jq -c -s -L "$(dirname "$0")" 'include "device-mode";
	(map(.mode_gate_ns // empty) | min) as $g | .[] |
	if $g != null and .mode_gate_ns != null and .xcpu_rtt_ns != null and .xcpu_rtt_after_ns != null then
		.host_mode = host_mode($g)
		| .mode_gate_final_ns = $g
		| if .host_mode == "mixed" then .in_mode = false else . end
	else . end' "$results" >"$judged" || { echo "device-report: cannot read $results" >&2; exit 1; }

# Per row, host mode and peer: the medians over the rounds that ran, the IOPS range, how many runs
# failed. A run counts when it succeeded in its row's mode for the round (in_mode, device.sh's gate;
# runs of a benchmark without the gate have no in_mode and all count): runs kept off it are counted
# apart. A row whose rounds ran in both of the host's modes gets one entry per mode (host_mode:
# fast, slow; null without the gate): figures of the two modes never mix.
jq -s '
def counted: .status == "ok" and .in_mode != false;
def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r2: if . == null then null else (. * 100 | round) / 100 end;
group_by(.row) | map(
	. as $runs | ($runs | map(select(counted) | .host_mode) | unique) as $modes |
	(if ($modes | length) == 0 then [null] else $modes end)[] as $mode |
	($runs | map(select(counted and .host_mode == $mode))) as $ok |
	{
		row: $runs[0].row, host_mode: $mode, rounds: ($ok | map(.round) | unique),
		workload: ($ok[0].workload // null), bs: ($ok[0].bs // null), depth: ($ok[0].depth // null),
		jobs: ($ok[0].jobs // null), direct: ($ok[0].direct // null),
		others_cpu_pct: ($ok | map(.others_cpu_pct) | median | r2),
		others_cpu_pct_max: ($ok | map(.others_cpu_pct) | max),
		steal_pct_max: ($ok | map(.steal_pct // empty) | max),
		xcpu_rtt_ns: ($ok | map(.xcpu_rtt_ns // empty) | median | r2),
		xcpu_rtt_ns_min: ($ok | map(.xcpu_rtt_ns // empty) | min),
		xcpu_rtt_ns_max: ($ok | map(.xcpu_rtt_ns // empty) | max),
		# Runs whose round trip before and after differ by more than 2x: the host changed mode
		# during the run.
		mode_flips: ($ok | map(select(.xcpu_rtt_ns != null and .xcpu_rtt_after_ns != null and
			([.xcpu_rtt_ns, .xcpu_rtt_after_ns] | max) > 2 * ([.xcpu_rtt_ns, .xcpu_rtt_after_ns] | min))) | length),
		cpu_dma_latency: ($ok | map(.cpu_dma_latency) | unique),
		# The gate and what it did, over the whole row (both modes).
		mode_gate_ns: ($runs | map(.mode_gate_final_ns // .mode_gate_ns // empty) | max),
		redone: ($runs | map(select(.status == "redone")) | length),
		off_mode: ($runs | map(select(.status == "ok" and .in_mode == false)) | length),
		peers: ($runs | group_by(.peer) | map(
			. as $p | ($p | map(select(counted and .host_mode == $mode))) as $pok |
			($p | map(select(counted and .host_mode != $mode)) | length) as $other | {
				peer: $p[0].peer,
				target: ($pok[0].target // null),
				runs: ($pok | length),
				failed: ($p | map(select(.status == "failed")) | length),
				off_mode: ($p | map(select(.status == "ok" and .in_mode == false)) | length),
				status: (if ($pok | length) > 0 then "ok"
					elif $other > 0 then "other-mode"
					elif any($p[]; .status == "ok") then "off-mode" else $p[0].status end),
				why: (if ($pok | length) == 0 and $other > 0
					then "its \($other) counted run(s) were in the host'"'"'s other mode"
					elif ($pok | length) == 0 and any($p[]; .status == "ok")
					then "every run stayed off its row'"'"'s mode"
					else ([$p[] | select(.status != "ok" and .status != "redone") | .why] | unique | .[0] // null) end),
				iops: ($pok | map(.iops) | median | r2),
				iops_min: ($pok | map(.iops) | min), iops_max: ($pok | map(.iops) | max),
				mbps: ($pok | map(.mbps) | median | r2),
				lat_mean_us: ($pok | map(.lat_mean_us) | median | r2),
				lat_p50_us: ($pok | map(.lat_p50_us) | median | r2),
				lat_p99_us: ($pok | map(.lat_p99_us) | median | r2),
				cpu_us_per_req: ($pok | map(.peer_cpu_us_per_req) | map(select(. != null)) | median | r2),
				xcpu_rtt_ns: ($pok | map(.xcpu_rtt_ns // empty) | median | r2),
				resident_after: ($pok | map(.resident_after) | max),
				direct_how: ($pok[0].direct_how // null)
			}))
	}
	# The yardstick is the best peer that is not ringvm (the goals of ringvm are ratios to it), nor the
	# host (the limit); when no such peer ran, the best of the rest.
	| (.peers | map(select(.status == "ok" and .target != "host"))) as $ran
	| (($ran | map(select(.peer | startswith("ringvm") | not)) | max_by(.iops)) // ($ran | max_by(.iops)) // null) as $best
	| .best_peer = ($best.peer // null)
	# Yardsticks with no run counted in this mode: x_best compares only the rest.
	| .missing = [.peers[] | select(.status == "other-mode" or .status == "off-mode") | .peer |
		select(. != "host" and (startswith("ringvm") | not))]
	| .peers |= map(.ratio_to_best = (if .iops != null and $best != null and $best.iops > 0
		then (.iops / $best.iops * 1000 | round) / 1000 else null end))
)' "$judged" >"$out/summary.json" || { echo "device-report: cannot summarize $results" >&2; exit 1; }

# The goals, each judged on the median over rounds of what one round's runs give (device-goals.jq).
jq -s -f "$(dirname "$0")/device-goals.jq" "$judged" >"$out/goals.json" ||
	{ echo "device-report: cannot judge the goals from $results" >&2; exit 1; }

# Tables, in the order the rows ran.
{
	[ -n "$header" ] && sed 's/^/# /' <<<"$header"
	# Each row's entries (one per host mode), in the order the rows ran.
	order=$(jq -r '.row' "$results" | awk '!seen[$0]++')
	for row in $order; do
	for i in $(jq -r --arg row "$row" 'to_entries[] | select(.value.row == $row) | .key' "$out/summary.json"); do
		jq -r --argjson i "$i" '.[$i] |
		def f(n): if . == null then "-" else (. * pow(10; n) | round) / pow(10; n) | tostring end;
		"\n== \(.row)\(if .host_mode != null then " [host in its \(.host_mode) mode: round(s) \(.rounds | map(tostring) | join(", "))]" else "" end): \(.workload // "?") \(.bs // "?") B, depth \(.depth // "?"), \(.jobs // "?") job(s), " +
		"\(if .direct then "O_DIRECT" else "page cache" end); best peer other than ringvm: \(.best_peer // "none")\n" +
		"   rest of the machine busy \(.others_cpu_pct | f(0))% of all CPUs (max \(.others_cpu_pct_max | f(0))%), " +
		"steal max \(.steal_pct_max | f(1))%, cpu_dma_latency \(.cpu_dma_latency | join(","))\n" +
		"   cross-CPU round trip before the runs: median \(.xcpu_rtt_ns | f(0)) ns " +
		"(\(.xcpu_rtt_ns_min | f(0))-\(.xcpu_rtt_ns_max | f(0))); runs during which it changed more than 2x: \(.mode_flips)" +
		(if (.missing // []) != [] then "\n   no run in this mode: \(.missing | join(", ")); x_best compares the peers that have one" else "" end) +
		(if .mode_gate_ns != null then "\n   gate between the modes \(.mode_gate_ns | f(0)) ns (the lowest the benchmark used); the row, both modes: runs redone \(.redone), " +
			"kept off mode and not counted \(.off_mode)" else "" end)' "$out/summary.json"
		jq -r --argjson i "$i" '
		def f(n): if . == null then "-" else (. * pow(10; n) | round) / pow(10; n) | tostring end;
		.[$i] |
		(["peer", "IOPS", "range", "MB/s", "mean_us", "p50_us", "p99_us", "cpu_us/req", "x_best", "rtt_ns", "runs", "note"] | @tsv),
		(.peers[] | [
			.peer,
			(.iops | f(0)),
			(if .iops_min != null then "\(.iops_min | f(0))-\(.iops_max | f(0))" else "-" end),
			(.mbps | f(1)), (.lat_mean_us | f(1)), (.lat_p50_us | f(1)), (.lat_p99_us | f(1)),
			(.cpu_us_per_req | f(2)),
			(.ratio_to_best | f(2)),
			(.xcpu_rtt_ns | f(0)),
			"\(.runs)\(if .failed > 0 then " (\(.failed) failed)" else "" end)\(if .off_mode > 0 then " (\(.off_mode) off mode)" else "" end)",
			(if .status != "ok" then "\(.status): \(.why // "")"
			 elif .resident_after != null and .resident_after > 0.05 and (.direct_how != null)
			 then "page cache used (\(.resident_after * 100 | round)% resident after): not direct I/O"
			 else (.direct_how // "") end)
		] | @tsv)' "$out/summary.json" | column -t -s $'\t' -L 2>/dev/null || true
	done
	done
	echo
	echo "== goals: per round, the value from that round's runs (its peers ran back to back); the median"
	echo "   over the rounds is judged (the host's speed drifts between rounds: medians of different rounds"
	echo "   may pair a fast round with a slow one); host_limit: the host's own io_uring over the same best"
	echo "   peer (for reads about the most a device can reach: no device in between)"
	jq -r 'def f: if . == null then "-" else tostring end;
		(["goal", "row", "mode", "value", "range", "target", "host_limit", "rounds", "verdict"] | @tsv),
		(.[] | [.goal, .row, (.host_mode | f), (.median | f),
			(if .min != null then "\(.min)-\(.max)" else "-" end),
			"\(.op) \(.target)", (.host_limit | f), (.rounds | tostring),
			.verdict] | @tsv)' "$out/goals.json" |
		column -t -s $'\t' -L 2>/dev/null || true
	# Counted per mode: a row judged in both modes is two lines.
	jq -r 'group_by(.host_mode)[] | (.[0].host_mode) as $m | group_by(.verdict) |
		map("\(length) \(.[0].verdict)") | "goals\(if $m != null then " (host in its \($m) mode)" else "" end): " + join(", ")' "$out/goals.json"
	echo
	echo "rtt_ns: the median of the cross-CPU round trip measured before each of the peer's runs (probe.h):"
	echo "   this host's vCPUs move, and a peer that ran at ~340 ns ran on a slower machine than one at ~95 ns;"
	echo "x_best: IOPS / that of the best peer other than ringvm (the host row is the limit, not a peer);"
	echo "cpu_us/req: the peer's utime+stime (whole process tree, /proc) per request; medians over the"
	echo "rounds, range = min-max IOPS."
} >"$out/tables.txt"

# One chart per workload and host mode (<row>.png; <row>-slow.png for the rounds in the slow mode):
# median IOPS per peer, the range as error bars.
for i in $(jq -r 'keys[]' "$out/summary.json"); do
	row=$(jq -r --argjson i "$i" '.[$i] | .row + (if .host_mode == "slow" then "-slow" else "" end)' "$out/summary.json")
	dat=$out/$row.dat
	jq -r --argjson i "$i" '.[$i] | .peers[] | select(.status == "ok") |
		"\(.peer) \(.iops) \(.iops_min) \(.iops_max)"' "$out/summary.json" >"$dat"
	[ -s "$dat" ] || { rm -f "$dat"; continue; }
	title=$(jq -r --argjson i "$i" '.[$i] |
		"\(.row): \(.workload) \(.bs) B, depth \(.depth), \(.jobs) job(s), \(if .direct then "O_DIRECT" else "page cache" end)\(if .host_mode != null then ", host in its \(.host_mode) mode" else "" end)"' \
		"$out/summary.json")
	gnuplot <<EOF 2>>"$out/gnuplot.log"
set terminal pngcairo size 900,500 noenhanced
set output "$out/$row.png"
set title "$title"
set ylabel "requests/s (median, range over rounds)"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set xtics rotate by -30
set grid ytics
set format y "%.0s%c"
plot "$dat" using 0:2:xtic(1) with boxes notitle, "" using 0:2:3:4 with yerrorbars lc rgb "black" pt 0 notitle
EOF
	rm -f "$dat"
done
exit 0
