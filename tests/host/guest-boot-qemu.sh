#!/bin/sh
# guest-boot-qemu.sh: boot the real guest (Debian kernel + our initramfs) under QEMU, without ringvm (TAP).
#
#   tests/host/guest-boot-qemu.sh KERNEL INITRD (make guest-boot-qemu)
#
# Checks the guest half of guest/protocol.h against a real kernel on any host, KVM or not: QEMU's
# isa-debug-exit device sits on RINGVM_EXIT_PORT and exits with (status << 1) | 1, so the status PID 1
# writes there comes back as QEMU's own exit status. TCG by default (this machine's /dev/kvm cannot run
# a stock kernel); QEMU_ACCEL=kvm on a hardware-KVM host. About 5-10 s per boot under TCG.
set -u
kernel=${1:?usage: $0 KERNEL INITRD}
initrd=${2:?usage: $0 KERNEL INITRD}
accel=${QEMU_ACCEL:-tcg}
exit_port=$(sed -n 's/^#define RINGVM_EXIT_PORT \(0x[0-9a-f]*\)$/\1/p' "$(dirname "$0")/../../guest/protocol.h")
[ -n "$exit_port" ] || { echo "guest-boot-qemu: no RINGVM_EXIT_PORT in protocol.h" >&2; exit 2; }

work=$(mktemp -d)
qemu_pid=
cleanup() {
	[ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
n=0
failed=0

# boot CMDLINE: run the guest to its end with stdin from $work/in (default: nothing); leaves the
# serial output in $work/out and the status PID 1 sent in $status ("off" for a power-off, "none" when
# QEMU failed or timed out).
boot() {
	[ -e "$work/in" ] || : >"$work/in"
	timeout 180 qemu-system-x86_64 -accel "$accel" -M q35 -cpu max -m 256 -smp 1 \
		-nodefaults -no-user-config -display none -serial stdio -no-reboot \
		-device "isa-debug-exit,iobase=$exit_port,iosize=1" \
		-kernel "$kernel" -initrd "$initrd" -append "console=ttyS0 quiet loglevel=0 panic=-1 $1" \
		<"$work/in" >"$work/out" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		status=off
	elif [ $((rc & 1)) = 1 ] && [ $rc -lt 512 ]; then
		status=$((rc >> 1))
	else
		status=none
	fi
	rm -f "$work/in"
}

check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2 (status $status)"
		sed 's/^/# out: /' "$work/out"
	fi
}

# The commands below are guest shell code, percent-encoded by hand (see guest/cmdline.h).

# sh -c 'for m in virtio_mmio virtio_blk virtiofs fuse; do grep -q "^$m " /proc/modules || echo no $m; done; echo "hi there"; exit 7'
boot "ringvm.cmd=sh,-c,for%20m%20in%20virtio_mmio%20virtio_blk%20virtiofs%20fuse%3B%20do%20grep%20-q%20%22%5E%24m%20%22%20/proc/modules%20%7C%7C%20echo%20no%20%24m%3B%20done%3B%20echo%20%22hi%20there%22%3B%20exit%207"
[ "$status" = 7 ] && grep -qx "hi there" "$work/out" && ! grep -q "^no " "$work/out" &&
	! grep -q "ringvm-init" "$work/out"
check $? "the modules load, the command's raw output and exit status 7 come back, PID 1 is quiet"

# printf '[%s]\n' 'a b' '"q" '"'s'" '' 'café' 'x,y%'
boot "ringvm.cmd=printf,%5B%25s%5D%5Cn,a%20b,%22q%22%20%27s%27,%,caf%C3%A9,x%2Cy%25"
[ "$status" = 0 ] && grep -qx '\[a b\]' "$work/out" && grep -qx "\\[\"q\" 's'\\]" "$work/out" &&
	grep -qx '\[\]' "$work/out" && grep -qx '\[café\]' "$work/out" && grep -qx '\[x,y%\]' "$work/out"
check $? "arguments with spaces, quotes, an empty one, UTF-8 and commas arrive intact"

boot "ringvm.cmd=ls,%G1"
[ "$status" = 125 ] && grep -q "ringvm-init: malformed ringvm.cmd=" "$work/out"
check $? "a malformed ringvm.cmd= is reported and gives 125"

boot "ringvm.cmd=no-such-command"
[ "$status" = 127 ]
check $? "a missing command gives 127"

# No command: a shell; type into it once its prompt shows, then power off from inside.
mkfifo "$work/fifo"
: >"$work/out"
timeout 180 qemu-system-x86_64 -accel "$accel" -M q35 -cpu max -m 256 -smp 1 \
	-nodefaults -no-user-config -display none -serial stdio -no-reboot \
	-device "isa-debug-exit,iobase=$exit_port,iosize=1" \
	-kernel "$kernel" -initrd "$initrd" -append "console=ttyS0 quiet loglevel=0 panic=-1" \
	<"$work/fifo" >"$work/out" 2>&1 &
qemu_pid=$!
exec 3>"$work/fifo"
for _ in $(seq 150); do
	grep -q '# ' "$work/out" && break
	sleep 1
done
# shellcheck disable=SC2016 # typed into the guest shell, which expands it
printf 'echo hel""lo $((6*7))\npoweroff -f\n' >&3
wait "$qemu_pid"
rc=$?
qemu_pid=
exec 3>&-
status=$rc
cr=$(printf '\r')
[ $rc = 0 ] && grep -q "^hello 42$cr\$" "$work/out"
check $? "without a command, a shell on a cooked console runs what is typed, and poweroff -f ends the VM"

echo "1..$n"
[ "$failed" = 0 ]
