#!/bin/bash
# gdb.sh: the gdb stub under a KVM that runs Linux (the lab here): tests/boot/gdb.sh with what that
# KVM delivers (software breakpoints and the guest's own int3 given back, where PVM has none), then
# Debian's gdb against the Debian kernel: attach to it running, a software breakpoint at a symbol,
# registers, memory, one step, on to the command's exit status; and --gdb-wait with detach.
# Env: RINGVM, GDB_CAPS. TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init gdb

# The payload suite, renumbered into this script's stream, with what this host's KVM delivers
# (GDB_CAPS, see tests/boot/gdb.sh). In the KVM lab (L1 under QEMU TCG) debug-register breakpoints
# and watchpoints never reach the nested guest, while int3 and single steps do (QEMU's own gdbstub
# on the same KVM behaves the same: tests/lab/README.md); elsewhere everything is checked.
if grep -q ringvm_lab.dir= /proc/cmdline; then
	caps=${GDB_CAPS:-sw step}
	ip link set lo up 2>/dev/null # L1 has no network; the TCP check needs its loopback
else
	caps=${GDB_CAPS:-hw sw watch step}
fi
GDB_CAPS=$caps RINGVM=$ringvm tests/boot/gdb.sh >"$tmp/payload.tap" 2>&1
payload_rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*"# SKIP"*) n=$((n + 1)); echo "ok $n # SKIP payload: ${line#*# SKIP }" ;;
	"ok "*) ok "payload: $(echo "$line" | sed 's/^ok [0-9]* *-* *//')" ;;
	"not ok "*) notok "payload: $(echo "$line" | sed 's/^not ok [0-9]* *-* *//')" ;;
	esac
done <"$tmp/payload.tap"
[ "$payload_rc" = 0 ] || grep -q '^not ok' "$tmp/payload.tap" || notok "payload suite exited $payload_rc"

# Debian's packages ship a stub System.map (the real one is in the -dbg package): the addresses come
# from the running kernel's /proc/kallsyms instead, printed by the guest command before it waits.
# gdb attaches to the running guest (no --gdb-wait: the kernel's own page tables map its text, so a
# software breakpoint can go in by symbol address), breaks in ksys_sync, which the guest calls only
# once gdb's `shell touch` has created the file it waits for, reads registers and memory, steps,
# and continues to the command's end.
mkdir "$tmp/share"
vm_bg --gdb "unix:$tmp/sock" --cpus 2 --share "$tmp/share:/mnt/t" -- sh -c '
	grep -E " (ksys_sync|linux_banner)$" /proc/kallsyms
	while [ ! -e /mnt/t/go ]; do sleep 0.2; done
	sync
	exit 3'
wait_output linux_banner && wait_output ksys_sync
addr() { awk -v s="$1" '$3 == s { print "0x" $1 }' "$tmp/out" | head -n1; }
ksys_sync=$(addr ksys_sync)
banner=$(addr linux_banner)
if [ -z "$ksys_sync" ] || [ -z "$banner" ] || [ "$ksys_sync" = 0x0000000000000000 ]; then
	notok "kallsyms gave ksys_sync and linux_banner $(show)"
	vm_kill
	it_done
fi
timeout 600 gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' -ex "target remote $tmp/sock" \
	-ex 'info threads' -ex "break *$ksys_sync" -ex "shell touch $tmp/share/go" -ex 'continue' \
	-ex 'p/x $pc' -ex 'p/x $cs' -ex 'p/x $cr3' -ex 'p/x $cr0' -ex "x/s $banner" -ex 'x/2i $pc' \
	-ex 'stepi' -ex 'p/x $pc' -ex 'delete' -ex 'continue' >"$tmp/gdb.out" 2>&1
wait "$vm_pid"
rc=$?
vm_pid=
value() { sed -n "s/^\\\$$1 = //p" "$tmp/gdb.out" | head -n1; }
gdbshow() { echo "(gdb: $(tail -c 1500 "$tmp/gdb.out" | tr '\n' '|'); ringvm $rc: $(tail -c 300 "$tmp/err" | tr '\n' '|'))"; }
grep -q "Thread 2 (vCPU 1)" "$tmp/gdb.out" && ok "attached to the running kernel: both vCPUs are threads" ||
	notok "attach $(gdbshow)"
[ "$(value 1)" = "$ksys_sync" ] && ok "software breakpoint at ksys_sync (kallsyms): the guest stops there" ||
	notok "break ksys_sync $(gdbshow)"
[ "$(value 2)" = 0x10 ] && [ "$(value 3)" != 0x0 ] && [ $(($(value 4) & 0x80000001)) = $((0x80000001)) ] &&
	ok "registers: kernel cs 0x10, cr3 set, cr0 with PE and PG" || notok "registers $(gdbshow)"
grep -q '"Linux version 6\.' "$tmp/gdb.out" && ok "memory at linux_banner through the kernel's page tables" ||
	notok "linux_banner $(gdbshow)"
# Where one step must land: the first instruction's target if it is a call, else the next one.
first=$(grep -m1 '^=> ' "$tmp/gdb.out")
if echo "$first" | grep -q 'call '; then
	want=$(echo "$first" | sed -n 's/.*call *\(0x[0-9a-f]*\).*/\1/p')
else
	want=$(grep -A1 -m1 '^=> ' "$tmp/gdb.out" | tail -n1 | sed -n 's/^ *\(0x[0-9a-f]*\).*/\1/p')
fi
[ -n "$want" ] && [ "$(value 5)" = "$want" ] && ok "stepi runs exactly one instruction ($want)" ||
	notok "stepi (want '$want') $(gdbshow)"
grep -q "exited with code 03" "$tmp/gdb.out" && [ "$rc" = 3 ] &&
	ok "continue to the end: the command's status reaches gdb and ringvm (3)" || notok "the end $(gdbshow)"

# --gdb-wait with the kernel: stopped before its first instruction, then let go by detach.
vm_bg --gdb "unix:$tmp/sock2" --gdb-wait -- sh -c 'exit 4'
for _ in $(seq 1 300); do [ -S "$tmp/sock2" ] && break; sleep 0.1; done
timeout 300 gdb -batch -nx -ex 'set confirm off' -ex "target remote $tmp/sock2" -ex 'p/x $pc' \
	-ex 'p/x $efer' -ex 'detach' >"$tmp/gdb.out" 2>&1
wait "$vm_pid"
rc=$?
vm_pid=
[ -n "$(value 1)" ] && [ $(($(value 2) & 0x500)) = $((0x500)) ] && grep -q detached "$tmp/gdb.out" &&
	ok "--gdb-wait: the kernel waits at its 64-bit entry (EFER.LME|LMA) for the debugger" ||
	notok "gdb-wait $(gdbshow)"
[ "$rc" = 4 ] && ok "after the detach the guest runs on to its command's status (4)" || notok "after detach $(gdbshow)"
it_done
