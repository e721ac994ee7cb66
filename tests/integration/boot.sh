#!/bin/bash
# boot.sh: boot the stock Debian kernel through `ringvm run` and check what a user sees (issue 3).
# Needs a KVM that runs Linux (the lab here). Env: RINGVM; SAN_PASS=1 runs the short list. TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init boot

vm -- echo hi
[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = hi ] && [ ! -s "$tmp/err" ] &&
	ok "echo hi prints exactly 'hi', nothing else, status 0" || notok "echo hi $(show)"

vm -- sh -c 'exit 7'
[ "$rc" = 7 ] && ok "exit 7 comes back as ringvm's status" || notok "exit 7 $(show)"

vm -- sh -c 'kill -9 $$'
[ "$rc" = 137 ] && ok "a command killed by SIGKILL gives 128+9" || notok "killed command $(show)"

# stdin is not a terminal here: the command must read EOF, not wait for a console nobody types into.
vm -- sh -c 'cat; echo read-eof'
[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = read-eof ] && ok "with no terminal, the command's stdin is at EOF" ||
	notok "stdin EOF $(show)"

# The command leads the console's foreground process group in PID 1's session: the console is its
# controlling terminal (job control, /dev/tty), and its exit does not hang the console up (a hangup
# throws away what is still queued for the UART: the last lines).
vm -- sh -c 'set -- $(cat /proc/$$/stat); echo $1 $5 $6 $8'
read -r pid pgrp sid tpgid <"$tmp/out"
[ "$rc" = 0 ] && [ -n "$pid" ] && [ "$pgrp" = "$pid" ] && [ "$tpgid" = "$pid" ] && [ "$sid" = 1 ] &&
	ok "the command is the console's foreground process group, in PID 1's session" ||
	notok "process group and session $(show)"

vm -- /no/such/command
[ "$rc" = 127 ] && grep -q "no/such/command" "$tmp/err" && [ ! -s "$tmp/out" ] &&
	ok "a missing command gives 127 and says so on stderr" || notok "missing command $(show)"

if [ -z "${SAN_PASS:-}" ]; then
	vm --cpus 2 --memory 768M -- sh -c 'nproc; grep MemTotal /proc/meminfo'
	cpus=$(head -n1 "$tmp/out")
	mem_kb=$(awk '/MemTotal/ {print $2}' "$tmp/out")
	[ "$rc" = 0 ] && [ "$cpus" = 2 ] && ok "--cpus 2: the guest sees 2 CPUs" || notok "--cpus 2 $(show)"
	# MemTotal is RAM less what the kernel keeps for itself: between 85% and 100% of 768M.
	[ -n "$mem_kb" ] && [ "$mem_kb" -gt $((768 * 1024 * 85 / 100)) ] && [ "$mem_kb" -le $((768 * 1024)) ] &&
		ok "--memory 768M: MemTotal $mem_kb kB" || notok "--memory 768M $(show)"

	# A KVM that gives new vCPUs a TSC rate its host cannot run (set on purpose by
	# tests/support/tsc_skew.c, preloaded into ringvm; a kvm module loaded before its host's TSC
	# calibration was final does it by itself) computes their TSC as 0 and fires TSC-deadline timers
	# minutes late. ringvm gives such vCPUs the host's rate: the stock kernel boots on two of them and
	# its timers fire (the sleep returns).
	LD_PRELOAD="$(dirname "$ringvm")/tests/tsc_skew.so" vm --cpus 2 -- sh -c 'sleep 0.2; nproc'
	if grep -q "tsc_skew: the VM's TSC rate NOT set\|scales TSC rates: yes" "$tmp/err"; then
		skip "a VM given a TSC rate its host cannot run" "the rate could not be set, or this KVM scales it: $(head -c 200 "$tmp/err")"
	else
		grep -q "^tsc_skew: the VM's TSC rate set to" "$tmp/err" &&
			grep -q "^ringvm: KVM gave vCPU 0 a TSC rate it cannot run here .*the vCPUs run at the host's" "$tmp/err" &&
			[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = 2 ] &&
			ok "a VM given a TSC rate its host cannot run: ringvm mends it; the kernel brings up both vCPUs and its sleep returns" ||
			notok "a VM given a TSC rate its host cannot run $(show)"
	fi

	vm --cmdline 'ringvm_test_token=42 quiet' -- cat /proc/cmdline
	grep -q 'ringvm_test_token=42 quiet' "$tmp/out" && ok "--cmdline reaches the guest kernel" ||
		notok "--cmdline $(show)"

	arg1='two  spaces'
	arg2="it's \"quoted\", with , commas % and \\ backslash"
	arg3='tab	and ünïcode'
	vm -- printf '[%s]\n' "$arg1" "$arg2" "$arg3" ""
	printf '[%s]\n' "$arg1" "$arg2" "$arg3" "" >"$tmp/want"
	cmp -s "$tmp/out" "$tmp/want" && ok "arguments with spaces, quotes, commas, UTF-8 and empty survive intact" ||
		notok "argument quoting $(show)"

	# RINGVM_MAX_DEVICES (16) at once, 12 disks and 4 shares: each on an interrupt line of its own,
	# pins 16-23 and then the ISA pins nobody uses; every disk's read and every share's mount needs
	# its interrupt to arrive.
	devs=()
	want=""
	for i in $(seq 1 12); do
		printf 'disk%02d' "$i" >"$tmp/d$i.img" && truncate -s 1M "$tmp/d$i.img"
		devs+=(--disk "$tmp/d$i.img,readonly")
		want="${want}disk$(printf %02d "$i")
"
	done
	for i in 1 2 3 4; do
		mkdir -p "$tmp/s$i" && echo "share$i" >"$tmp/s$i/f"
		devs+=(--share "$tmp/s$i:/s$i,readonly")
		want="${want}share$i
"
	done
	vm "${devs[@]}" -- sh -c 'for d in a b c d e f g h i j k l; do head -c 6 /dev/vd$d; echo; done; cat /s1/f /s2/f /s3/f /s4/f'
	[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "$(printf '%s' "$want")" ] &&
		ok "16 devices at once (12 disks, 4 shares): each one answers" || notok "16 devices $(show)"

	if [ -f build/guest/kernel/vmlinux ]; then
		vm --kernel build/guest/kernel/vmlinux -- uname -r
		[ "$rc" = 0 ] && grep -q cloud-amd64 "$tmp/out" && ok "uncompressed vmlinux boots through its PVH entry" ||
			notok "PVH vmlinux $(show)"
	else
		notok "build/guest/kernel/vmlinux missing"
	fi

	# The kernel's messages are on the serial console, which goes to stderr: stdout is the command's.
	vm --verbose -- echo only-this
	grep -q "Linux version" "$tmp/err" && [ "$(cat "$tmp/out")" = only-this ] &&
		ok "--verbose shows the kernel's messages on stderr, never in the command's stdout" ||
		notok "--verbose $(show)"
fi

# The console's last bytes at exit. A command that prints 6 KB and exits at once leaves up to 4 KiB
# in the guest's tty queue; PID 1 must see it all leave before it reports the status (guest/drain.c).
# (That the command's exit cannot hang the console up, which would throw the queue away, is the
# process group check above.) 6 KB, not 14: every byte is a UART exit two levels down, and 3 x 14 KB
# wedged the lab's L1 (QEMU TCG) in CI twice in a row.
# Not in the sanitizer pass: this is PID 1's and the guest kernel's behaviour, not ringvm's memory.
if [ -z "${SAN_PASS:-}" ]; then
	seq 1 1400 >"$tmp/want"
	echo LAST-LINE >>"$tmp/want"
	for run in 1 2 3; do
		vm -- sh -c 'seq 1 1400; echo LAST-LINE'
		[ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/want" || break
	done
	if [ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/want"; then
		ok "3 runs: 1,401 lines, the last one included, each time (PID 1 drains the console)"
	else
		notok "console drain, run $run: status $rc, $(wc -l <"$tmp/out") lines, ends '$(tail -n1 "$tmp/out")' (stderr: $(tail -c 300 "$tmp/err"))"
	fi
fi

# A kernel that panics: no initrd, so no init and no root filesystem; panic=-1 reboots at once.
vm --initrd none --cmdline 'panic=-1'
[ "$rc" = 123 ] && grep -q "panic" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] &&
	ok "a kernel panic ends ringvm with status 123 and one line naming it" || notok "panic $(show)"

# With panic=0 the kernel would wait forever: ringvm ends the run itself.
if [ -z "${SAN_PASS:-}" ]; then
	vm --initrd none --cmdline 'panic=0'
	[ "$rc" = 123 ] && ok "a panicked kernel that does not reboot still ends the run (123)" ||
		notok "panic=0 $(show)"
fi

# A real panic, from a command: the kernel's pvpanic notifier ends the run at once (no grace period
# as when the panic line was looked for in the console text): 123 and one line of ringvm's own.
# "now" is what the command prints 1 s before it crashes the kernel; the time from its arrival to
# ringvm's end, less that second, is how long the panic took to end the run.
timeout "${VM_TIMEOUT:-300}" bash -c '"$1" run -- sh -c "echo now; sleep 1; echo c >/proc/sysrq-trigger; sleep 60" \
	2>"$2/err"; echo $? >"$2/rc"; date +%s%N >"$2/end"' _ "$ringvm" "$tmp" |
	{ read -r _; date +%s%N >"$tmp/now"; cat >/dev/null; }
rc=$(cat "$tmp/rc" 2>/dev/null)
ms=$(( ($(cat "$tmp/end" 2>/dev/null || echo 0) - $(cat "$tmp/now" 2>/dev/null || echo 0)) / 1000000 - 1000 ))
[ "$rc" = 123 ] && [ "$(grep -c '^ringvm:' "$tmp/err")" = 1 ] && grep -q '^ringvm: .*panic' "$tmp/err" &&
	[ "$ms" -lt 2500 ] &&
	ok "echo c >/proc/sysrq-trigger: status 123, one line, the run ends ${ms} ms after the crash" ||
	notok "sysrq crash: status $rc after ${ms} ms (stderr: $(grep '^ringvm' "$tmp/err" | tail -c 300))"

if [ -z "${SAN_PASS:-}" ]; then
	# The panic line printed by a program (console, kernel log at emergency level) is just text.
	vm -- sh -c 'echo "Kernel panic - not syncing: fake" >/dev/console
		echo "<0>Kernel panic - not syncing: fake" >/dev/kmsg; sleep 4; echo done'
	[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = done ] &&
		ok "a program printing 'Kernel panic - not syncing' runs to its normal end (status 0)" ||
		notok "a fake panic line $(show)"
fi

# Interactive: a shell on the console, driven through a pty (tests/pty-drive runs script(1)).
# interactive LINE...: type each line once the shell has answered the previous one: the first after
# the prompt ("/ # "), later ones after the previous line's marker, which the guest's shell computes
# (the echo of the typed line never matches it). $rc is ringvm's status; $drive_err says what went
# wrong when the session did not run to its end (the shell never answered, ringvm ended early).
interactive() {
	local i=0 line steps=()
	for line in "$@"; do
		if [ "$i" = 0 ]; then steps+=(' # '); else steps+=("mark-$i-done"); fi
		i=$((i + 1))
		steps+=("$(printf '%s; echo mark-%d-d""one\r' "$line" "$i")")
	done
	drive_err=$("$(dirname "$0")/../pty-drive" --timeout "${VM_TIMEOUT:-300}" "$tmp/tty" "$ringvm run" \
		"${steps[@]}" 2>&1 >/dev/null)
	rc=$?
}
# session_show: the session's failure, if any, and the end of what the terminal showed.
session_show() { echo "(status $rc${drive_err:+; $drive_err}; tty: $(tail -c 400 "$tmp/tty" | tr -d '\r'))"; }
interactive 'echo typed-$((6*7))' 'exit 5'
if [ -z "$drive_err" ] && grep -q 'typed-42' "$tmp/tty" && [ "$rc" = 5 ]; then
	ok "interactive shell through a pty: input reaches the guest, output comes back, exit 5 ends ringvm with 5"
else
	notok "interactive shell $(session_show)"
fi

if [ -z "${SAN_PASS:-}" ]; then
	interactive 'poweroff -f'
	[ -z "$drive_err" ] && [ "$rc" = 0 ] && ok "poweroff -f in the guest ends ringvm cleanly (0)" ||
		notok "poweroff $(session_show)"
	interactive 'reboot -f'
	[ -z "$drive_err" ] && [ "$rc" = 0 ] && ok "reboot -f in the guest ends ringvm cleanly (0)" ||
		notok "reboot $(session_show)"
fi

it_done
