#!/bin/sh
# tests/fuzz/run.sh FUZZER SECONDS: run a libFuzzer target for a bounded time from its corpus; TAP.
#
# The corpus lives in the tree: tests/fuzz/seeds/NAME (tests/fuzz/fuzz.mk). New inputs go to a
# scratch corpus under build/fuzz-corpus/NAME.
# With FUZZ_KEEP=1 (`make fuzz`), the scratch corpus and the tree's are merged afterwards into a
# minimal set (libFuzzer -merge=1) that replaces the tree's folder, so what a long run learnt is
# kept and can be committed. The TAP line carries libFuzzer's figures: execs, cov (edges) and ft
# (features).
set -u
fuzzer=$1
seconds=$2
name=$(basename "$fuzzer")
seeds=tests/fuzz/seeds/$name
[ -d "$seeds" ] || seeds=
corpus=build/fuzz-corpus/$name
mkdir -p "$corpus"
log=$(mktemp)
# shellcheck disable=SC2086
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="build/fuzz-corpus/$name-" "$corpus" $seeds >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
# The last status line ("#N DONE cov: C ft: F corp: ...") holds the coverage reached.
cov=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n1 | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p')
if [ "$rc" -eq 0 ]; then
	echo "ok 1 - $name: ${runs:-?} execs in ${seconds}s, ${cov:-no coverage line}, no crash"
else
	echo "not ok 1 - $name: crashed or failed (exit $rc)"
	grep -E 'ERROR|SUMMARY|artifact' "$log" | head -n 10 | sed 's/^/# /'
fi
if [ "$rc" -eq 0 ] && [ "${FUZZ_KEEP:-0}" = 1 ] && [ -n "$seeds" ]; then
	# Minimize the union into a fresh folder, then make it the tree's corpus.
	merged=$(mktemp -d)
	if "$fuzzer" -merge=1 -timeout=10 -rss_limit_mb=2048 "$merged" "$seeds" "$corpus" >"$log" 2>&1; then
		rm -f "$seeds"/*
		cp "$merged"/* "$seeds"/ 2>/dev/null
		echo "# $name: corpus $seeds now $(find "$seeds" -type f | wc -l) inputs, $(du -sk --apparent-size "$seeds" | cut -f1) KiB of bytes"
	else
		echo "# $name: merge failed, corpus left as it was"
	fi
	rm -rf "$merged"
fi
rm -f "$log"
echo "1..1"
[ "$rc" -eq 0 ]
