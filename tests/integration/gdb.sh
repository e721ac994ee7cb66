#!/bin/bash
# gdb.sh: Debian's gdb against the Debian kernel under ringvm's gdb stub, in one boot (a KVM that
# runs Linux: the lab here). First session, --gdb-wait: the kernel waits at its 64-bit entry;
# registers, single steps, detach. Second session, attached to the running kernel: both vCPUs as
# threads, control registers, memory at a symbol (linux_banner, from /proc/kallsyms) through the
# kernel's page tables, a software breakpoint at a symbol (ksys_sync) where the KVM delivers int3,
# then continue to the command's status. The stub against a firmware payload, with everything
# else it does, is tests/boot/gdb.sh (host tests). Env: RINGVM, GDB_CAPS (see tests/boot/gdb.sh).
# TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init gdb

# In the KVM lab (L1 under QEMU 7.2 TCG) neither int3 nor debug-register breakpoints of a nested
# guest reach L1's KVM; single steps do. Why, in QEMU's TCG (target/i386/tcg): an int3 is raised as
# a software interrupt, which checks SVM's INTn intercept (SVM_EXIT_SWINT), not the #BP exception
# intercept KVM sets for KVM_GUESTDBG_USE_SW_BP, so L2's own IDT takes it; and VMRUN loads DR7 from
# the VMCB by assignment, without re-arming TCG's breakpoints (cpu_x86_update_dr7), while KVM wrote
# DR0-3 with DR7 clear: the debug registers hold the breakpoint but nothing ever checks it. A trap
# flag's #DB is raised as an exception and meets KVM's #DB intercept: steps work.
if grep -q ringvm_lab.dir= /proc/cmdline; then
	caps=${GDB_CAPS:-step}
else
	caps=${GDB_CAPS:-hw sw watch step}
fi
can() { case " $caps " in *" $1 "*) return 0 ;; esac; return 1; }

value() { sed -n "s/^\\\$$1 = //p" "$tmp/gdb.out" | head -n1; }
gdbshow() { echo "(gdb: $(tail -c 1500 "$tmp/gdb.out" | tr '\n' '|'); ringvm: $(tail -c 300 "$tmp/err" | tr '\n' '|'))"; }
# next_pc: where one stepi from the first "=> " line of x/2i must land: a call's target, else the
# next instruction.
next_pc() {
	local first
	first=$(grep -m1 '^=> ' "$tmp/gdb.out")
	if echo "$first" | grep -q 'call '; then
		echo "$first" | sed -n 's/.*call *\(0x[0-9a-f]*\).*/\1/p'
	else
		grep -A1 -m1 '^=> ' "$tmp/gdb.out" | tail -n1 | sed -n 's/^ *\(0x[0-9a-f]*\).*/\1/p'
	fi
}
# gdb_kernel ARGS...: Debian's gdb, no symbol file, on the kernel behind $tmp/sock.
gdb_kernel() {
	timeout 300 gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' -ex "target remote $tmp/sock" \
		"$@" >"$tmp/gdb.out" 2>&1
}

# The guest prints the two symbols' addresses (Debian's packages ship a stub System.map; the real
# one is in the -dbg package), waits for a file the second gdb session creates, calls sync(2)
# (ksys_sync) and exits 3.
mkdir "$tmp/share"
vm_bg --gdb "unix:$tmp/sock" --gdb-wait --cpus 2 --share "$tmp/share:/mnt/t" -- sh -c '
	grep -E " (ksys_sync|linux_banner)$" /proc/kallsyms
	while [ ! -e /mnt/t/go ]; do sleep 0.2; done
	sync
	exit 3'
# The stub listens before any vCPU starts: the socket is there within moments, or ringvm failed.
for _ in $(seq 1 300); do [ -S "$tmp/sock" ] || ! kill -0 "$vm_pid" 2>/dev/null && break; sleep 0.1; done

# 1. --gdb-wait: stopped at the kernel's 64-bit entry; registers, steps, then detach.
gdb_kernel -ex 'p/x $pc' -ex 'p/x $efer' -ex 'p/x $cr0' -ex 'x/2i $pc' -ex 'stepi' -ex 'p/x $pc' \
	-ex 'stepi 20' -ex 'p/x $pc' -ex 'detach'
[ -n "$(value 1)" ] && [ $(($(value 2) & 0x500)) = $((0x500)) ] && [ $(($(value 3) & 0x80000001)) = $((0x80000001)) ] &&
	ok "--gdb-wait: stopped at the kernel's 64-bit entry (EFER.LME|LMA, CR0.PE|PG)" || notok "entry $(gdbshow)"
want=$(next_pc)
[ -n "$want" ] && [ "$(value 4)" = "$want" ] && ok "stepi runs exactly one instruction ($want)" ||
	notok "stepi (want '$want') $(gdbshow)"
[ -n "$(value 5)" ] && [ "$(value 5)" != "$(value 4)" ] && ok "stepi 20 moves on through the kernel's entry code" ||
	notok "stepi 20 $(gdbshow)"
grep -q "detached" "$tmp/gdb.out" && ok "detach: the kernel boots on by itself" || notok "detach $(gdbshow)"

# 2. Attach to the running kernel once its command has printed the symbols.
if ! wait_output linux_banner || ! wait_output ksys_sync; then
	notok "the kernel booted after the detach and kallsyms gave ksys_sync and linux_banner $(show)"
	vm_kill
	it_done
fi
addr() { awk -v s="$1" '$3 == s { print "0x" $1 }' "$tmp/out" | head -n1; }
ksys_sync=$(addr ksys_sync)
banner=$(addr linux_banner)
if [ -z "$ksys_sync" ] || [ "$ksys_sync" = 0x0000000000000000 ] || [ -z "$banner" ]; then
	notok "kallsyms gave ksys_sync and linux_banner (run as root) $(show)"
	vm_kill
	it_done
fi
if can sw; then
	brk=(-ex "break *$ksys_sync" -ex "shell touch $tmp/share/go" -ex 'continue' -ex 'p/x $pc' -ex 'delete')
else
	brk=(-ex "shell touch $tmp/share/go")
fi
gdb_kernel -ex 'info threads' -ex 'p/x $cr0' -ex 'p/x $cr3' -ex "x/s $banner" "${brk[@]}" -ex 'continue'
wait "$vm_pid"
rc=$?
vm_pid=
grep -q "Thread 2 (vCPU 1)" "$tmp/gdb.out" && ok "attached to the running kernel: both vCPUs stop, as threads" ||
	notok "attach $(gdbshow)"
[ $(($(value 1) & 0x80000001)) = $((0x80000001)) ] && [ "$(value 2)" != 0x0 ] &&
	ok "registers of the running kernel: CR0.PE|PG, CR3" || notok "registers $(gdbshow)"
grep -q '"Linux version 6\.' "$tmp/gdb.out" && ok "memory at linux_banner (kallsyms) through the kernel's page tables" ||
	notok "linux_banner $(gdbshow)"
if can sw; then
	[ "$(value 3)" = "$ksys_sync" ] && ok "software breakpoint at ksys_sync (kallsyms): the kernel stops there" ||
		notok "break ksys_sync $(gdbshow)"
else
	skip "software breakpoint at a kernel symbol" "this KVM does not deliver a nested guest's int3 (GDB_CAPS=$caps)"
fi
grep -q "exited with code 03" "$tmp/gdb.out" && [ "$rc" = 3 ] &&
	ok "continue to the end: the command's status reaches gdb and ringvm (3)" || notok "the end $(gdbshow)"
it_done
