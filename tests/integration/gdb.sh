#!/bin/bash
# gdb.sh: the gdb stub under a KVM that traps everything (the lab here): tests/boot/gdb.sh in full
# (software breakpoints, watchpoints, the guest's own int3 given back), then Debian's gdb against the
# Debian kernel: a hardware breakpoint at start_kernel from its System.map, registers, memory, one
# step, a software breakpoint at kernel_init, and on to the command's exit status. Env: RINGVM. TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init gdb

# The payload suite, renumbered into this script's stream.
GDB_FULL=1 RINGVM=$ringvm tests/boot/gdb.sh >"$tmp/payload.tap" 2>&1
payload_rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok "payload: $(echo "$line" | sed 's/^ok [0-9]* *-* *//')" ;;
	"not ok "*) notok "payload: $(echo "$line" | sed 's/^not ok [0-9]* *-* *//')" ;;
	esac
done <"$tmp/payload.tap"
[ "$payload_rc" = 0 ] || grep -q '^not ok' "$tmp/payload.tap" || notok "payload suite exited $payload_rc"

map=$(ls build/guest/kernel/root/boot/System.map-* 2>/dev/null | head -n1)
addr() { awk -v s="$1" '$3 == s { print "0x" $1 }' "$map"; }
start_kernel=$(addr start_kernel)
banner=$(addr linux_banner)
kernel_init=$(addr kernel_init)
if [ -z "$map" ] || [ -z "$start_kernel" ] || [ -z "$banner" ] || [ -z "$kernel_init" ]; then
	notok "System.map with start_kernel, linux_banner and kernel_init (got '$map')"
	it_done
fi

# KASLR off, so that System.map's addresses are where the kernel runs.
vm_bg --gdb "unix:$tmp/sock" --gdb-wait --cmdline nokaslr -- sh -c 'exit 3'
for _ in $(seq 1 300); do [ -S "$tmp/sock" ] && break; sleep 0.1; done
timeout 600 gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
	-ex "target remote $tmp/sock" \
	-ex "hbreak *$start_kernel" -ex 'continue' -ex 'p/x $pc' -ex 'p/x $cs' -ex 'p/x $cr3' \
	-ex "x/s $banner" -ex 'x/2i $pc' -ex 'stepi' -ex 'p/x $pc' -ex 'delete' \
	-ex "break *$kernel_init" -ex 'continue' -ex 'p/x $pc' -ex 'delete' -ex 'continue' \
	>"$tmp/gdb.out" 2>&1
wait "$vm_pid"
rc=$?
vm_pid=
value() { sed -n "s/^\\\$$1 = //p" "$tmp/gdb.out" | head -n1; }
gdbshow() { echo "(gdb: $(tail -c 1200 "$tmp/gdb.out" | tr '\n' '|'); ringvm $rc: $(tail -c 300 "$tmp/err" | tr '\n' '|'))"; }
[ "$(value 1)" = "$start_kernel" ] && ok "hardware breakpoint at start_kernel (System.map): pc there" ||
	notok "hbreak start_kernel $(gdbshow)"
[ "$(value 2)" = 0x10 ] && [ "$(value 3)" != 0x0 ] && ok "registers: kernel cs 0x10, cr3 set" ||
	notok "registers $(gdbshow)"
grep -q '"Linux version 6\.' "$tmp/gdb.out" && ok "memory at linux_banner through the kernel's page tables" ||
	notok "linux_banner $(gdbshow)"
# Where one step must land: the first instruction's target if it is a call, else the next one.
first=$(grep -m1 '^=> ' "$tmp/gdb.out")
if echo "$first" | grep -q 'call '; then
	want=$(echo "$first" | sed -n 's/.*call *\(0x[0-9a-f]*\).*/\1/p')
else
	want=$(grep -A1 -m1 '^=> ' "$tmp/gdb.out" | tail -n1 | sed -n 's/^ *\(0x[0-9a-f]*\).*/\1/p')
fi
[ -n "$want" ] && [ "$(value 4)" = "$want" ] && ok "stepi runs exactly one instruction ($want)" ||
	notok "stepi (want '$want') $(gdbshow)"
[ "$(value 5)" = "$kernel_init" ] && ok "software breakpoint at kernel_init (int3 through the kernel's page tables)" ||
	notok "break kernel_init $(gdbshow)"
grep -q "exited with code 03" "$tmp/gdb.out" && [ "$rc" = 3 ] &&
	ok "continue to the end: the command's status reaches gdb and ringvm (3)" || notok "the end $(gdbshow)"

# Without --gdb-wait: gdb attaches to a running guest (which waits for a file we create only after
# gdb detached), stops it, reads its registers and lets it go.
mkdir "$tmp/share"
vm_bg --gdb "unix:$tmp/sock2" --cpus 2 --share "$tmp/share:/mnt/t" -- \
	sh -c 'while [ ! -e /mnt/t/go ]; do sleep 0.2; done; exit 4'
for _ in $(seq 1 300); do [ -S "$tmp/sock2" ] && break; sleep 0.1; done
timeout 300 gdb -batch -nx -ex 'set confirm off' -ex "target remote $tmp/sock2" -ex 'info threads' \
	-ex 'p/x $pc' -ex 'detach' >"$tmp/gdb.out" 2>&1
touch "$tmp/share/go"
wait "$vm_pid"
rc=$?
vm_pid=
grep -q "Thread 2 (vCPU 1)" "$tmp/gdb.out" && [ -n "$(value 1)" ] && grep -q detached "$tmp/gdb.out" &&
	ok "attach to a running guest: both vCPUs stop, registers read, detach" || notok "attach $(gdbshow)"
[ "$rc" = 4 ] && ok "after the detach the guest runs on to its command's status (4)" || notok "after detach $(gdbshow)"
it_done
