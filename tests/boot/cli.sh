#!/bin/sh
# cli.sh: bad command-line input gets one line on stderr naming the problem and a non-zero exit.
# Env: RINGVM (the binary), KERNEL (a real bzImage, default build/guest/kernel/vmlinuz). TAP output.
set -u
ringvm=${RINGVM:-build/ringvm}
kernel=${KERNEL:-build/guest/kernel/vmlinuz}
fw=${FIRMWARE_DIR:-build/firmware}
export RINGVM_ALLOW_PVM=1 # every case here fails before a vCPU runs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../support/tap.sh"

# refuse DESCRIPTION PATTERN ARGS...: status 125, exactly one stderr line matching PATTERN, no stdout.
refuse() {
	desc=$1 pattern=$2
	shift 2
	timeout 20 "$ringvm" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" = 125 ] && [ "$lines" = 1 ] && grep -q "^ringvm: .*$pattern" "$tmp/err" && [ ! -s "$tmp/out" ]; then
		pass "$desc: $(cat "$tmp/err")"
	else
		fail "$desc (status $rc, $lines stderr lines: $(head -c 300 "$tmp/err"))"
	fi
}

refuse "no command" "usage\|ringvm run" 2>/dev/null
refuse "unknown subcommand" "unknown command 'fly'" fly
refuse "unknown option" "unknown option --frobnicate" run --frobnicate
refuse "option without its value" "needs a value" run --kernel
refuse "argument without --" "unexpected argument 'uname'" run uname
refuse "memory with a bad suffix" "memory 12Q" run --memory 12Q
refuse "memory zero" "memory 0" run --memory 0
refuse "memory too small" "memory must be" run --kernel "$fw/exit.elf" --initrd none --memory 1M
refuse "memory not page-aligned" "memory must be" run --kernel "$fw/exit.elf" --initrd none --memory 100000001
refuse "cpus zero" "cpus 0" run --cpus 0
refuse "cpus too many" "cpus 300" run --cpus 300
refuse "cpus not a number" "cpus two" run --cpus two
refuse "missing kernel" "cannot read kernel /nonexistent/vmlinuz: No such file" run --kernel /nonexistent/vmlinuz --initrd none
refuse "a directory that is not a built kernel tree" "kernel tree /tmp has neither arch/x86/boot/bzImage nor vmlinux" run --kernel /tmp --initrd none
: >"$tmp/empty"
refuse "empty kernel" "empty file" run --kernel "$tmp/empty" --initrd none
printf 'not a kernel at all\n' >"$tmp/text"
refuse "kernel that is neither bzImage nor ELF" "neither a bzImage nor an ELF" run --kernel "$tmp/text" --initrd none
head -c 1000000 "$kernel" >"$tmp/truncated"
refuse "truncated bzImage" "corrupt or unsupported" run --kernel "$tmp/truncated" --initrd none
refuse "missing initrd" "cannot read initrd /nonexistent.cpio" run --kernel "$fw/exit.elf" --initrd /nonexistent.cpio
truncate -s 200M "$tmp/huge.cpio"
refuse "initrd larger than guest memory" "does not fit" run --kernel "$fw/exit.elf" --initrd "$tmp/huge.cpio" --memory 64M
truncate -s 16M "$tmp/disk.img"
refuse "disk that does not exist" "disk /nonexistent.img: no such file" run --disk /nonexistent.img
refuse "disk that is a directory" "disk /tmp: is a directory" run --disk /tmp
refuse "disk with an unknown option" "unknown option" run --disk "$tmp/disk.img,frob"
refuse "disk with a bad queue count" "queues" run --disk "$tmp/disk.img,queues=0"
long=$(head -c 3000 /dev/zero | tr '\0' 'x')
refuse "command longer than the kernel command line" "too long" run --kernel "$kernel" --initrd none -- echo "$long"
refuse "--fs-limits with a bad value" "fs-limits fds=0: expected fds=N" run --kernel "$fw/exit.elf" --initrd none --fs-limits fds=0
refuse "--share with an unknown xattr policy" "xattr= must be user, none, security or all" run --kernel "$fw/exit.elf" --initrd none --share "$tmp:/m,xattr=trusted"
refuse "--share on procfs" "/proc" run --kernel "$fw/exit.elf" --initrd none --share "/proc:/m"
refuse "--env without =" "env FOO: want NAME=VALUE" run --env FOO -- true
refuse "--env with an empty name" "env =x: want NAME=VALUE" run -e =x -- true
refuse "--workdir relative" "workdir tmp: the directory must be absolute" run -w tmp -- true
refuse "--user by name" "user nobody: want UID" run --user nobody -- true
refuse "--user with (uid_t)-1" "user 4294967295" run -u 4294967295 -- true
refuse "--timeout 0" "timeout 0: want whole seconds" run --timeout 0 -- true
refuse "--timeout with a suffix" "timeout 5s" run --timeout 5s -- true
refuse "--stop-timeout negative" "stop-timeout -1: want whole seconds, 0 to" run --stop-timeout -1 -- true
refuse "--stop-timeout too large" "stop-timeout 1000001: want whole seconds" run --stop-timeout 1000001 -- true
refuse "--stop-timeout fractional" "stop-timeout 1.5: want whole seconds" run --stop-timeout 1.5 -- true
refuse "--stop-timeout without its value" "needs a value" run --stop-timeout
refuse "--env for the shell (no command)" "apply to a COMMAND" run --kernel "$fw/exit.elf" --initrd none -e A=1

# --config FILE (JSON) and config --print.
printf '{ "kernal": "x" }\n' >"$tmp/unknown.json"
refuse "--config with an unknown key" "unknown.json: kernal: unknown key" run --config "$tmp/unknown.json"
printf '{ "shares": [ { "host_dir": "/a", "guest_dir": "/b", "queues": "2" } ] }\n' >"$tmp/type.json"
refuse "--config with a wrong type" "type.json: shares\[0\].queues: expected an integer" run --config "$tmp/type.json"
printf '{ "cpus": 2,\n' >"$tmp/syntax.json"
refuse "--config with a syntax error" "syntax.json: line 2" run --config "$tmp/syntax.json"
refuse "--config of a missing file" "/nonexistent.json: No such file" run --config /nonexistent.json
refuse "config without --print" "config --print" config
cat >"$tmp/vm.json" <<JSON
{ "kernel": "$fw/exit.elf", "initrd": null, "memory": "64M", "cpus": 2,
  "disks": [ { "path": "$tmp/disk.img", "queues": 2 } ],
  "shares": [ { "host_dir": "$tmp", "guest_dir": "/mnt", "xattr": "none" } ],
  "command": [ "true" ] }
JSON
timeout 20 "$ringvm" run --config "$tmp/vm.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
# A command: the serial console (the firmware's greeting) is stderr, stdout the command's.
[ "$rc" = 42 ] && grep -q "hello from firmware" "$tmp/err" && pass "run --config boots the file's kernel with its disk and share" ||
	fail "run --config: status $rc, $(head -c 300 "$tmp/err")"
"$ringvm" config --print --config "$tmp/vm.json" --cpus 3 --memory 128M -- echo hi >"$tmp/print1.json" 2>"$tmp/err"
"$ringvm" config --print --config "$tmp/print1.json" >"$tmp/print2.json" 2>>"$tmp/err"
if cmp -s "$tmp/print1.json" "$tmp/print2.json" && grep -q '"cpus": 3' "$tmp/print1.json" &&
	grep -q '"memory": "128M"' "$tmp/print1.json" && grep -q '"echo"' "$tmp/print1.json" &&
	grep -q '"xattr": "none"' "$tmp/print1.json"; then
	pass "config --print: options override the file, and the output loads back to the same config"
else
	fail "config --print: $(head -c 300 "$tmp/err") $(head -c 300 "$tmp/print1.json")"
fi
"$ringvm" config --print --config "$tmp/vm.json" --disk "$tmp/disk.img,readonly" >"$tmp/print3.json" 2>&1
[ "$(grep -c '"path"' "$tmp/print3.json")" = 1 ] && grep -q '"readonly": true' "$tmp/print3.json" &&
	pass "a --disk replaces the file's list of disks" || fail "--disk over --config: $(head -c 300 "$tmp/print3.json")"
# The run settings from the file, and each option over them.
cat >"$tmp/run.json" <<JSON
{ "kernel": "$fw/exit.elf", "initrd": null, "command": [ "true" ], "env": [ "A=1", "B=2" ],
  "workdir": "/srv", "user": { "uid": 5 }, "timeout": 30, "stop_timeout": 4, "tty": "off",
  "gdb": "tcp:127.0.0.1:0", "gdb_wait": true }
JSON
"$ringvm" config --print --config "$tmp/run.json" >"$tmp/print4.json" 2>&1
want_all() { # want_all FILE PATTERN...: every pattern is a line of FILE
	local f=$1 p
	shift
	for p; do grep -qF -- "$p" "$f" || { echo "# missing: $p"; return 1; }; done
}
want_all "$tmp/print4.json" '"A=1",' '"B=2"' '"workdir": "/srv"' '"uid": 5' '"gid": 5' '"timeout": 30' \
	'"stop_timeout": 4' '"tty": "off"' '"gdb": "tcp:127.0.0.1:0"' '"gdb_wait": true' &&
	pass "config --print shows the file's env, workdir, user, timeout, stop_timeout, tty, gdb, gdb_wait" ||
	fail "run settings from --config: $(head -c 400 "$tmp/print4.json")"
"$ringvm" config --print --config "$tmp/run.json" --env C=3 --workdir /tmp --user 6:7 --timeout 9 \
	--stop-timeout 0 --tty --gdb "unix:$tmp/gdb.sock" -- false >"$tmp/print5.json" 2>&1
want_all "$tmp/print5.json" '"C=3"' '"workdir": "/tmp"' '"uid": 6' '"gid": 7' '"timeout": 9' \
	'"stop_timeout": 0' '"tty": "on"' "\"gdb\": \"unix:$tmp/gdb.sock\"" '"false"' &&
	! grep -q '"A=1"' "$tmp/print5.json" &&
	pass "each run option overrides the file (an --env replaces its list)" ||
	fail "run options over --config: $(head -c 400 "$tmp/print5.json")"
# The file's timeout ends a guest that never stops, as --timeout does (exit 124; timeout(1) would
# end it with SIGKILL, 137).
printf '{ "kernel": "%s", "initrd": null, "memory": "64M", "timeout": 1, "tty": "off" }\n' "$fw/halt.elf" \
	>"$tmp/halt.json"
timeout -s KILL 30 "$ringvm" run --config "$tmp/halt.json" </dev/null >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 124 ] && pass "the file's \"timeout\" stops the guest (exit 124)" ||
	fail "\"timeout\" from --config: status $rc, $(head -c 300 "$tmp/err")"
printf '{ "kernel": "%s", "initrd": null, "cpus": 0 }\n' "$fw/exit.elf" >"$tmp/zero.json"
refuse "config --print checks what it prints (cpus 0 from a file)" "cpus must be between" config --print --config "$tmp/zero.json"
refuse "run checks a file's values too" "cpus must be between" run --config "$tmp/zero.json"

"$ringvm" --help >"$tmp/out" 2>&1 && grep -q "ringvm run" "$tmp/out" && pass "--help describes the run command" || fail "--help"
"$ringvm" run --help >"$tmp/out" 2>&1
missing=""
for o in --kernel --initrd --cmdline --cpus --memory --disk --verbose --help --env --workdir --user \
	--timeout --stop-timeout --tty --no-tty --share --root --fs-limits --jail --uid --gid --timing; do
	grep -q -- "$o" "$tmp/out" || missing="$missing $o"
done
[ -z "$missing" ] && pass "run --help describes every option" || fail "run --help lacks:$missing"
echo "1..$n"
[ "$fails" = 0 ]
