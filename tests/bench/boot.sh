#!/bin/bash
# boot.sh [N]: boot the default guest N times (default 20) with `ringvm run --timing -- true` and
# print medians and spread of: ringvm's setup before the first KVM_RUN, process start -> guest PID 1
# reached, and the whole run end to end (wall clock around the process). Run through tests/with-kvm.
set -eu
cd "$(dirname "$0")/../.."
n=${1:-20}
ringvm=${RINGVM:-build/ringvm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ringvm" run -- true # warm the page cache: the first boot reads the kernel from disk
for i in $(seq "$n"); do
	t0=$(date +%s%N)
	"$ringvm" run --timing -- true 2>"$tmp/err"
	t1=$(date +%s%N)
	line=$(grep 'ringvm: timing:' "$tmp/err")
	echo "$line" | sed -n 's/.*first_kvm_run_ms=\([0-9.-]*\).*/\1/p' >>"$tmp/setup"
	echo "$line" | sed -n 's/.*init_ms=\([0-9.-]*\).*/\1/p' >>"$tmp/init"
	echo "$(( (t1 - t0) / 1000 ))" | awk '{ printf "%.1f\n", $1 / 1000 }' >>"$tmp/total"
done
echo "ringvm boot, $n runs of 'ringvm run -- true' ($(uname -r), $(nproc) CPUs$([ -e /sys/module/kvm_amd ] && echo ', kvm-amd'))"
printf '  %-38s %s\n' "setup before first KVM_RUN (ms)" "$(tests/bench/stats.sh <"$tmp/setup")"
printf '  %-38s %s\n' "process start -> guest PID 1 (ms)" "$(tests/bench/stats.sh <"$tmp/init")"
printf '  %-38s %s\n' "'ringvm run -- true' end to end (ms)" "$(tests/bench/stats.sh <"$tmp/total")"
