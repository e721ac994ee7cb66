#!/bin/sh
# install-boot.sh: the example that tests/host/install.sh built against the installed tree (with
# pkg-config, dynamically and statically) boots a firmware payload through the installed library and
# prints its status. install.sh keeps the examples and the installed libringvm.so in $B/install-example;
# this part needs a /dev/kvm, so on a host without one it runs in the KVM lab (tests/run).
# Env: B (build folder, default build), FIRMWARE_DIR (default build/firmware). TAP output.
set -u
fw=${FIRMWARE_DIR:-build/firmware}
kept=${B:-build}/install-example
. "$(dirname "$0")/../support/tap.sh"
err=$(mktemp)
trap 'rm -f "$err"' EXIT

version=$(sed -n 's/^#define RINGVM_VERSION_STRING "\(.*\)"$/\1/p' include/ringvm.h)
major=$(sed -n 's/^#define RINGVM_VERSION_MAJOR \([0-9]*\)$/\1/p' include/ringvm.h)
if ! [ -x "$kept/boot" ] || ! [ -x "$kept/boot-static" ]; then
	fail "no examples in $kept: tests/host/install.sh runs first and keeps them there"
	echo "1..$n"
	exit 1
fi
lib=$(cd "$kept/lib" && pwd)
resolved=$(LD_LIBRARY_PATH=$lib ldd "$kept/boot" 2>/dev/null | sed -n 's/.*libringvm.so[^ ]* => \([^ ]*\).*/\1/p')
check "the example loads the installed libringvm.so ($resolved)" [ "$resolved" = "$lib/libringvm.so.$major" ]
# With a command the serial console (the firmware's greeting) is stderr: stdout is the command's.
out=$(LD_LIBRARY_PATH=$lib RINGVM_ALLOW_PVM=1 timeout 60 "$kept/boot" "$fw/exit.elf" none -- true 2>"$err")
rc=$?
if [ "$rc" = 42 ] && grep -q "hello from firmware" "$err" &&
	printf '%s' "$out" | grep -q "^ringvm-boot: libringvm $version: guest command exited with status 42, status 42$"; then
	pass "the example boots a payload through the installed library and prints its status 42"
else
	fail "the example: status $rc, stdout: $(printf '%s' "$out" | tail -n 2), stderr: $(head -c 300 "$err")"
fi
out=$(RINGVM_ALLOW_PVM=1 timeout 60 "$kept/boot-static" "$fw/exit.elf" none 2>&1)
rc=$?
check "the example linked with libringvm.a boots too (status $rc)" [ "$rc" = 42 ]

echo "1..$n"
[ "$fails" = 0 ]
