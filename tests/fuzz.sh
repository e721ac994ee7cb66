#!/bin/sh
# fuzz.sh FUZZER SECONDS: run a libFuzzer target for a bounded time from its seed corpus; TAP result.
set -u
fuzzer=$1
seconds=$2
name=$(basename "$fuzzer")
corpus=build/fuzz-corpus/$name
mkdir -p "$corpus"
# Seed inputs live next to the code they exercise: <folder>/fuzz-seeds/NAME.
seeds=$(find . -path ./build -prune -o -type d -path "*/fuzz-seeds/$name" -print | tr '\n' ' ')
log=$(mktemp)
# shellcheck disable=SC2086
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="build/fuzz-corpus/$name-" "$corpus" $seeds >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
if [ "$rc" -eq 0 ]; then
	echo "ok 1 - $name: ${runs:-?} inputs in ${seconds}s, no crash"
else
	echo "not ok 1 - $name: crashed or failed (exit $rc)"
	grep -E 'ERROR|SUMMARY|artifact' "$log" | head -n 10 | sed 's/^/# /'
fi
rm -f "$log"
echo "1..1"
[ "$rc" -eq 0 ]
