#!/bin/sh
# device-test.sh: `make test`'s check of the device benchmark harness (TAP): BENCH_QUICK=1 runs every
# peer on every workload briefly; a check fails when a peer cannot start, a reply is wrong (the
# driver verifies each one), or the results do not parse. Never a speed verdict.
cd "$(dirname "$0")/../.." || exit 1
BENCH_QUICK=1 TAP=1 exec tests/bench/device.sh
