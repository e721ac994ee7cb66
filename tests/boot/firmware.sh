#!/bin/sh
# firmware.sh: boot the tiny PVH payloads of firmware/ through the real CLI; each ends its own way.
# Env: RINGVM (the binary), FIRMWARE_DIR (default build/firmware). TAP output.
set -u
ringvm=${RINGVM:-build/ringvm}
fw=${FIRMWARE_DIR:-build/firmware}
# These payloads are a few instructions, which PVM runs too: allow it for them.
export RINGVM_ALLOW_PVM=1
n=0
fails=0
check() { # check DESCRIPTION EXPECTED_STATUS EXPECTED_STDOUT_SUBSTRING MODE [ringvm args]
	desc=$1 want=$2 text=$3 mode=$4
	shift 4
	n=$((n + 1))
	out=$(timeout 20 "$ringvm" run --kernel "$fw/$mode.elf" --initrd none --memory 64M "$@" 2>/tmp/ringvm-fw-err.$$)
	rc=$?
	if [ "$rc" = "$want" ] && printf '%s' "$out" | grep -q "$text"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc (status $rc, want $want; stdout: $out; stderr: $(cat /tmp/ringvm-fw-err.$$))"
		fails=$((fails + 1))
	fi
}
check "exit port: the status byte becomes ringvm's exit status" 42 "hello from firmware" exit
check "exit port with 2 vCPUs" 42 "hello from firmware" exit --cpus 2
check "a kernel panic line then reset: crash status" 123 "Kernel panic" panic
check "triple fault: crash status" 123 "hello" triple
check "ACPI S5 power-off: status 0" 0 "hello" poweroff
check "ACPI reset register: status 0" 0 "hello" reset
n=$((n + 1))
timeout 20 "$ringvm" run --kernel "$fw/panic.elf" --initrd none --memory 64M >/dev/null 2>/tmp/ringvm-fw-err.$$
if grep -q "panic" /tmp/ringvm-fw-err.$$; then
	echo "ok $n - a panic is named in one line on stderr"
else
	echo "not ok $n - a panic is named on stderr (got: $(cat /tmp/ringvm-fw-err.$$))"
	fails=$((fails + 1))
fi
rm -f /tmp/ringvm-fw-err.$$

# Started with stdin closed, ringvm's command reads /dev/null: the next file ringvm opens (/dev/kvm)
# must not become fd 0 and the command's stdin. A payload that halts keeps it running to look.
n=$((n + 1))
err=/tmp/ringvm-fw-err.$$
"$ringvm" run --kernel "$fw/halt.elf" --initrd none --memory 64M -T -- true <&- >/dev/null 2>"$err" &
pid=$!
i=0
while ! grep -q hello "$err" 2>/dev/null && [ $i -lt 400 ] && kill -0 "$pid" 2>/dev/null; do
	sleep 0.05 # waiting for the guest to run, not a verdict
	i=$((i + 1))
done
fd0=$(readlink "/proc/$pid/fd/0")
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ "$fd0" = /dev/null ]; then
	echo "ok $n - started with stdin closed: fd 0 is /dev/null, not /dev/kvm"
else
	echo "not ok $n - started with stdin closed: fd 0 is '$fd0' (stderr: $(cat "$err"))"
	fails=$((fails + 1))
fi
rm -f "$err"
echo "1..$n"
[ "$fails" = 0 ]
