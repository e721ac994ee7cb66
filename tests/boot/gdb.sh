#!/bin/bash
# gdb.sh: the gdb stub (--gdb), driven by Debian's gdb in batch mode and by a raw protocol client
# (gdb_raw.py), against firmware/debug.elf booted through the real CLI. TAP.
# Env: RINGVM (default build/ringvm), FIRMWARE_DIR (default build/firmware), GDB_CAPS: what this
# host's KVM delivers to a guest, of "hw" (debug-register execute breakpoints), "sw" (int3), "watch"
# (debug-register data breakpoints), "step". Default: all of them, but "hw step" where /dev/kvm is
# PVM (kvm_pvm): PVM reports int3 as an emulation failure and never reports a data breakpoint.
# Checks of a feature the host lacks are skipped and counted; the stub itself is the same.
set -u
cd "$(dirname "$0")/../.." || exit 1
ringvm=${RINGVM:-build/ringvm}
elf=${FIRMWARE_DIR:-build/firmware}/debug.elf
export RINGVM_ALLOW_PVM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ringvm-gdb.XXXXXX") || exit 1
vm_pid=
cleanup() {
	[ -z "$vm_pid" ] || kill "$vm_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
check() { # check NAME 'SHELL EXPRESSION' (evaluated now)
	local name=$1
	if eval "$2"; then ok "$name"; else notok "$name (gdb: $(tail -c 1500 "$tmp/gdb.out" | tr '\n' '|'); ringvm: $(tail -c 300 "$tmp/err" | tr '\n' '|'))"; fi
}
sym() { printf '0x%x' "0x$(nm "$elf" | awk -v s="$1" '$3 == s { print $1 }')"; }
hex() { printf '0x%x' "$(($1))"; }

if [ -n "${GDB_CAPS+set}" ]; then
	caps=$GDB_CAPS
elif [ -e /sys/module/kvm_pvm ]; then
	caps="hw step"
else
	caps="hw sw watch step"
fi
can() { case " $caps " in *" $1 "*) return 0 ;; esac; return 1; }
# to_main64: gdb commands that stop at main64 (paging on): a hardware breakpoint there, or software
# ones at long_entry (identity-mapped, so it can be set before paging) and then at main64, or, with
# neither, single steps until pc is main64 (the payload takes ~130 instructions to get there).
printf 'while $pc != (long)&main64\n  stepi\nend\n' >"$tmp/step-to-main64.gdb"
if can hw; then
	to_main64=(-ex 'hbreak main64' -ex 'continue')
	how=hardware
elif can sw; then
	to_main64=(-ex 'break *long_entry' -ex 'continue' -ex 'delete' -ex 'break main64' -ex 'continue')
	how=software
else
	to_main64=(-x "$tmp/step-to-main64.gdb")
	how=step
fi

# vm_start ARGS...: the payload under --gdb on $tmp/sock (--gdb-wait unless ARGS say otherwise),
# in the background; returns once the socket exists (the stub listens before the guest starts).
vm_start() {
	rm -f "$tmp/sock" "$tmp/out" "$tmp/err"
	timeout 120 "$ringvm" run --kernel "$elf" --initrd none --memory 64M "$@" \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	vm_pid=$!
	for _ in $(seq 1 200); do
		[ -S "$tmp/sock" ] || grep -q "gdb stub on" "$tmp/err" 2>/dev/null && return 0
		kill -0 "$vm_pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
vm_wait() {
	wait "$vm_pid"
	rc=$?
	vm_pid=
}
# gdb_batch TARGET ARGS...: Debian's gdb on the payload's symbols, connected to TARGET.
gdb_batch() {
	local target=$1
	shift
	timeout 120 gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' "$elf" \
		-ex "target remote $target" "$@" >"$tmp/gdb.out" 2>&1
}
has() { grep -qF -- "$1" "$tmp/gdb.out"; }
# value N: the Nth "$N = VALUE" gdb printed.
value() { sed -n "s/^\\\$$1 = //p" "$tmp/gdb.out" | head -n1; }

main64=$(sym main64)
pml4=$(sym pml4)
stack_top=$(sym stack_top)
[ "$main64" != 0x0 ] && [ "$pml4" != 0x0 ] || { echo "Bail out! no symbols in $elf"; exit 1; }

# 1. Stop before the first instruction; registers, a hardware breakpoint at a symbol, memory by
# virtual address through the payload's own 4-level page tables, one step, threads, a write, the end.
vm_start --cpus 2 --gdb "unix:$tmp/sock" --gdb-wait
gdb_batch "$tmp/sock" \
	-ex 'p/x $pc' -ex 'p ($cr0 & 0x80000001) == 1' -ex 'p/x $cs' \
	"${to_main64[@]}" -ex 'p/x $pc' -ex 'p/x $cr3' -ex 'p ($cr0 >> 31) & 1' \
	-ex 'x/s &message' -ex 'stepi' -ex 'p/x $pc' -ex 'p/x $rsp' \
	-ex 'info threads' -ex 'set var *(char*)&exit_code = 7' -ex 'p/d *(unsigned char*)&exit_code' \
	-ex 'delete' -ex 'continue'
vm_wait
check "--gdb-wait: stopped at the PVH entry (_start) before its first instruction" '[ "$(value 1)" = "$(hex "$(sym _start)")" ]'
check "control registers: protected mode, paging off at entry" '[ "$(value 2)" = 1 ]'
check "segment registers: cs is ringvm's boot code selector 0x10" '[ "$(value 3)" = 0x10 ]'
if [ "$how" = step ]; then
	check "single steps from the entry reach main64 (no breakpoints on this host)" 'grep -q "$main64 in main64 ()" "$tmp/gdb.out"'
else
	check "a $how breakpoint at a symbol stops there" 'grep -q "Breakpoint [0-9], $main64 in main64 ()" "$tmp/gdb.out"'
fi
check "pc at the breakpoint is main64" '[ "$(value 4)" = "$main64" ]'
check "cr3 is the payload's own PML4, paging on" '[ "$(value 5)" = "$pml4" ] && [ "$(value 6)" = 1 ]'
check "memory at a symbol's virtual address, through the guest's page tables" 'grep -qF "\"hello from the debug payload\\n\"" "$tmp/gdb.out"'
step_pc=$(value 7)
check "stepi executes one instruction (lea stack_top(%rip),%rsp: 7 bytes)" '[ "$step_pc" = "$(hex "$main64 + 7")" ]'
check "... and that instruction's effect is visible (rsp = stack_top)" '[ "$(value 8)" = "$stack_top" ]'
check "every vCPU is a thread" 'has "Thread 2 (vCPU 1)"'
check "a memory write by virtual address lands (exit_code = 7)" '[ "$(value 9)" = 7 ]'
check "continue to the end: gdb sees the guest exit with its status" 'has "exited with code 07"'
check "ringvm exits with the status the debugger wrote" '[ "$rc" = 7 ]'

# 2. Software breakpoints (int3) and watchpoints (debug registers), each where the host delivers it.
if can sw; then
	vm_start --gdb "unix:$tmp/sock" --gdb-wait
	gdb_batch "$tmp/sock" "${to_main64[@]}" -ex 'delete' \
		-ex 'break tick' -ex 'continue' -ex 'x/1xb tick' -ex 'delete' \
		-ex 'set var *(long*)&self_trap = 1' -ex 'break int3_handler' -ex 'continue' -ex 'p/x $pc' \
		-ex 'delete' -ex 'continue'
	vm_wait
	check "software breakpoint at a symbol (int3, KVM_GUESTDBG_USE_SW_BP)" 'has "Breakpoint 3, $(sym tick) in tick ()" || has "Breakpoint 2, $(sym tick) in tick ()"'
	check "memory reads hide the int3 (tick starts with 0x48, incq)" 'grep -q "<tick>:	0x48" "$tmp/gdb.out"'
	check "the guest's own int3 reaches its handler while breakpoints are armed" 'has "in int3_handler ()"'
	check "... and the guest counted exactly one int3 (status 42, not 99)" '[ "$rc" = 42 ]'
else
	for what in "software breakpoint at a symbol" "memory reads hide the int3" \
		"the guest's own int3 reaches its handler while breakpoints are armed" "... and its status"; do
		skip "$what: this host's KVM does not deliver int3 (GDB_CAPS=$caps)"
	done
fi
if can watch; then
	vm_start --gdb "unix:$tmp/sock" --gdb-wait
	gdb_batch "$tmp/sock" "${to_main64[@]}" -ex 'delete' -ex 'watch *(long*)&watched' -ex 'continue' \
		-ex 'continue' -ex 'delete' -ex 'continue'
	vm_wait
	check "write watchpoint: stops after each write, with old and new value" \
		'grep -q "New value = 1" "$tmp/gdb.out" && grep -q "New value = 2" "$tmp/gdb.out" && [ "$rc" = 42 ]'
else
	skip "write watchpoint: this host's KVM does not deliver data breakpoints (GDB_CAPS=$caps)"
fi
if ! can hw; then
	skip "hardware breakpoint: this host's KVM does not deliver them (GDB_CAPS=$caps)"
fi

# 3. What gdb -batch cannot show: Ctrl-C, acks, malformed packets, X, two vCPUs (gdb_raw.py).
vm_start --cpus 2 --gdb "unix:$tmp/sock" --gdb-wait
first=$((n + 1))
timeout 120 python3 tests/boot/gdb_raw.py --elf "$elf" --socket "$tmp/sock" --first "$first" \
	--via "$(can hw && echo hw || { can sw && echo sw; } || echo step)" >"$tmp/raw.out" 2>&1
raw_rc=$?
vm_wait
grep -E '^(ok|not ok) ' "$tmp/raw.out"
ran=$(grep -cE '^(ok|not ok) ' "$tmp/raw.out")
n=$((n + ran))
fails=$((fails + $(grep -c '^not ok ' "$tmp/raw.out")))
if [ "$raw_rc" != 0 ] && ! grep -q '^not ok ' "$tmp/raw.out"; then
	notok "gdb_raw.py died: $(tail -n 5 "$tmp/raw.out" | tr '\n' '|')"
fi
check "after the raw session the guest exits with the status it wrote (5)" '[ "$rc" = 5 ]'

# 4. Detach at the first instruction: the guest runs on by itself.
vm_start --gdb "unix:$tmp/sock" --gdb-wait
gdb_batch "$tmp/sock" "${to_main64[@]}" -ex 'detach'
vm_wait
check "detach at a breakpoint lets the guest run to its end (42)" '[ "$rc" = 42 ] && has "detached"'
# The stub's thread removes the socket file at the end, confined (unlinkat in that directory only).
check "the Unix socket file is gone once ringvm ended" '[ ! -e "$tmp/sock" ]'

# 5. Kill from the debugger ends the VM.
vm_start --gdb "unix:$tmp/sock" --gdb-wait
gdb_batch "$tmp/sock" -ex 'kill'
vm_wait
check "kill from gdb ends ringvm with 128+9" '[ "$rc" = 137 ] && has "killed"'

# 6. TCP, port 0: ringvm says which port it got.
vm_start --gdb tcp:127.0.0.1:0 --gdb-wait
port=$(sed -n 's/.*gdb stub on tcp:127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/err")
gdb_batch "127.0.0.1:${port:-1}" -ex 'p/x $pc' -ex 'continue'
vm_wait
check "tcp:127.0.0.1:0 listens on the port it prints; continue runs to the end" \
	'[ -n "$port" ] && [ "$rc" = 42 ] && has "exited with code 052"'

# 7. A debugger that hangs up while the guest runs: the guest is let go.
vm_start --gdb "unix:$tmp/sock" --gdb-wait
python3 - "$tmp/sock" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
p = b"vCont;c"
s.sendall(b"$" + p + b"#%02x" % (sum(p) & 0xff))
s.close()
EOF
vm_wait
check "a debugger that hangs up mid-run releases the guest (42)" '[ "$rc" = 42 ]'

# 8. Bad --gdb input: one line, status 125, nothing touched.
echo keep >"$tmp/regular"
for args in "--gdb-wait" "--gdb bogus" "--gdb tcp:127.0.0.1:99999" "--gdb tcp:localhost:1234" \
	"--gdb unix:$tmp/regular" "--gdb unix:$tmp/jailed --jail"; do
	# shellcheck disable=SC2086
	"$ringvm" run --kernel "$elf" --initrd none --memory 64M $args >"$tmp/out" 2>"$tmp/err" </dev/null
	r=$?
	check "'$args' is refused in one line (125)" '[ "$r" = 125 ] && [ "$(wc -l <"$tmp/err")" = 1 ]'
done
check "a regular file at the socket path is left alone" '[ "$(cat "$tmp/regular")" = keep ]'

echo "1..$n"
[ "$fails" = 0 ]
