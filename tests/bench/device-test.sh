#!/bin/bash
# device-test.sh: `make test`'s check of the device benchmark harness (TAP): BENCH_QUICK=1 runs every
# peer briefly (tests/bench/README.md, "Quick mode"); a check fails when a peer cannot start, a reply
# is wrong (the driver verifies each one), or the results do not parse. Never a speed verdict. A
# second, shorter pass runs the ASan+UBSan build of the driver (and of ringvm, when it serves) on a
# few workloads (`make test` builds it; missing, it is a failed check). The two passes' TAP is
# numbered as one stream with one plan.
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
{
	BENCH_QUICK=1 TAP=1 B=$B tests/bench/device.sh
	if [ ! -x build/san/bench/device-driver ]; then
		# `make test` builds it: a pass that cannot run is a failure, never a silent skip.
		echo "not ok 1 - the ASan+UBSan pass: build/san/bench/device-driver is missing (make SAN=1 build/san/bench/device-driver)"
	else
		echo "# the same under ASan+UBSan (build/san), a few workloads"
		BENCH_QUICK=1 TAP=1 B=build/san OUT="$PWD/build/bench/device-quick-san" \
			WORKLOADS="rr-cache-qd16 rw-cache-qd16 rw-user-qd16 seq128k-qd16 meta-qd16 untar-qd16 rr-direct-qd64-j4" \
			tests/bench/device.sh
	fi
} | awk '
	/^1\.\.[0-9]+/ { next }
	/^(ok|not ok) [0-9]+/ { n++; sub(/^ok [0-9]+/, "ok " n); sub(/^not ok [0-9]+/, "not ok " n) }
	{ print; fflush() }
	END { print "1.." n }'
