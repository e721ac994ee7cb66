#!/bin/sh
# guest-init.sh: run the real PID 1 (build/guest/init) without a kernel or KVM, and check what it does (TAP).
#
#   tests/host/guest-init.sh [STAGEDIR]
#
# STAGEDIR is the initramfs tree guest/mkinitramfs.sh left (build/guest/initramfs.d). Each case copies
# nothing back: it runs /init as PID 1 of new user, PID, mount and network namespaces, chrooted into a
# copy of the tree, with /proc/cmdline replaced by the case's command line and /dev/console by a file.
# The user namespace keeps it harmless: finit_module, ioperm and reboot act on the namespace only (or
# fail), so no module reaches the host kernel and the power-off ends only the PID namespace. PID 1
# cannot write the exit port here, so ringvm.verbose=1 makes it print the status it would have sent.
# The commands below are guest shell code: single quotes keep them for the guest to expand.
# shellcheck disable=SC2016,SC1003
set -u
stage=${1:-build/guest/initramfs.img.d}
[ -x "$stage/init" ] || { echo "test-init: no $stage/init" >&2; exit 2; }
if ! unshare -Urpmnf true 2>/dev/null; then
	echo "1..0 # SKIP unprivileged user namespaces are not available here"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$stage" "$work/root"
touch "$work/root/dev/console" "$work/root/dev/null"
n=0
failed=0

# run CMDLINE: boot /init with that /proc/cmdline; leaves the console in $work/console, PID 1's own
# messages in $work/log and the status it would have sent in $status (empty if it sent none).
run() {
	printf '%s\n' "$1" >"$work/cmdline"
	: >"$work/console"
	(cd "$work" && timeout 20 unshare -Urpmnf --kill-child sh -c '
		mount -t proc proc root/proc &&
		mount --bind cmdline root/proc/cmdline &&
		mount --bind console root/dev/console &&
		mount --bind /dev/null root/dev/null &&
		exec chroot root /init' >"$work/log" 2>&1 </dev/null)
	status=$(sed -n 's/^ringvm-init: status \([0-9]*\): .*/\1/p' "$work/log")
}

check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		sed 's/^/# log: /' "$work/log"
		sed 's/^/# console: /' "$work/console"
	fi
}

# enc ARG...: the ringvm.cmd= value for that argv, written independently of guest/cmdline.c.
enc() {
	sep=""
	for arg; do
		printf '%s' "$sep"
		sep=","
		[ -n "$arg" ] || { printf '%%'; continue; }
		printf '%s' "$arg" | od -An -v -tx1 | tr -s ' ' '\n' | while read -r h; do
			[ -n "$h" ] || continue
			case $h in
			3[0-9] | 4[1-9a-f] | 5[0-9a] | 6[1-9a-f] | 7[0-9a] | 2e | 5f | 2f | 3a | 3d | 2b | 40 | 5e | 2d)
				# shellcheck disable=SC2059
				printf "\\$(printf %o "0x$h")" ;;
			*) printf '%%%s' "$(echo "$h" | tr a-f A-F)" ;;
			esac
		done
	done
}

expect() { # expect STATUS CONSOLE-TEXT WHAT
	[ "$status" = "$1" ] && [ "$(cat "$work/console")" = "$2" ]
	check $? "$3 (status $status, want $1)"
}

V="console=ttyS0 ringvm.verbose=1"

run "$V ringvm.cmd=sh,-c,echo%20%22hi%20there%22%3B%20exit%207"
expect 7 "hi there" "a shell command's output and exit status 7"

run "$V ringvm.cmd=true"
expect 0 "" "exit status 0"

run "$V ringvm.cmd=printf,%25s%7C,a%20b,%22q%22%20%27s%27,%,caf%C3%A9,x%2Cy"
expect 0 "a b|\"q\" 's'||café|x,y|" "spaces, quotes, an empty arg, UTF-8 and commas arrive intact"

run "$V ringvm.cmd=$(enc sh -c 'echo $PATH $HOME $TERM $(pwd)')"
expect 0 "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /root linux /" \
	"the command gets PATH, HOME, TERM and cwd /"

# The command leads its own process group, in PID 1's session: PID 1 keeps the session (and the
# console as its controlling tty) so that the command's exit does not hang the console up, which
# would throw away the output still queued for the UART.
run "$V ringvm.cmd=$(enc sh -c 'set -- $(cat /proc/$$/stat); echo $1 $5 $6')"
set -- $(cat "$work/console")
[ "$status" = 0 ] && [ "$#" = 3 ] && [ "$1" = "$2" ] && [ "$3" = 1 ]
check $? "the command leads its own process group in PID 1's session (pid pgrp sid: $*)"

run "$V ringvm.cmd=sh,-c,kill%20-9%20%24%24"
expect 137 "" "a command killed by SIGKILL gives 128+9"

run "$V ringvm.cmd=sh,-c,sleep%2030%20%26%20exit%203"
expect 3 "" "the status comes when the command ends, not its orphans"

run "$V ringvm.env=FOO=bar,TERM=dumb ringvm.cwd=/tmp ringvm.cmd=$(enc sh -c 'echo $FOO $TERM $HOME; pwd')"
expect 0 "bar dumb /root
/tmp" "ringvm.env= over the default environment, ringvm.cwd= the working directory"

run "$V ringvm.cwd=/no/such/dir ringvm.cmd=true"
expect 125 "ringvm-init: cannot run true: chdir: No such file or directory" \
	"a working directory that does not exist: said, status 125"

# Only uid 0 exists in this user namespace: setgroups (or setgid) fails, and says so.
run "$V ringvm.user=1000:1001 ringvm.cmd=true"
grep -q "^ringvm-init: cannot run true: set\(groups\|gid\|uid\): " "$work/console" && [ "$status" = 125 ]
check $? "a user that cannot be set: said, status 125 (status $status)"

run "$V ringvm.user=nobody ringvm.cmd=true"
grep -q "ringvm.user= is not UID:GID" "$work/log" && [ "$status" = 125 ]
check $? "a malformed ringvm.user= is refused before the command (status $status)"

# No virtio-console ports here (no ringvm device): PID 1 says so and falls back to the console, with
# stdin at EOF rather than a console nobody types into (up to 10 s of waiting for the ports' names).
run "$V ringvm.stdio=virtio ringvm.cmd=$(enc sh -c 'cat; echo done')"
grep -q "cannot be the virtio-console ports" "$work/log"
expect_said=$?
[ "$expect_said" = 0 ] && [ "$status" = 0 ] && [ "$(cat "$work/console")" = done ]
check $? "ringvm.stdio=virtio without ports: said, then the console with stdin at EOF (status $status)"

# A command on a tty whose signal port is missing (ringvm.signals=virtio): it runs as without, its
# status unchanged; PID 1 only says why signals will not reach it.
run "$V ringvm.signals=virtio ringvm.cmd=$(enc sh -c 'echo sig; exit 3')"
grep -q "signals sent to ringvm" "$work/log" && [ "$status" = 3 ] && [ "$(cat "$work/console")" = sig ]
check $? "ringvm.signals=virtio without the port: said, the command runs, its status 3 (status $status)"

run "$V ringvm.cmd=no-such-command,arg"
expect 127 "ringvm-init: cannot run no-such-command: No such file or directory" "a missing command gives 127"

run "$V ringvm.cmd=/etc/passwd"
expect 126 "ringvm-init: cannot run /etc/passwd: Permission denied" "a non-executable file gives 126"

for bad in "ls,%G1" "ls,%4" "" "ls,,x" "a%20b%"; do
	run "$V ringvm.cmd=$bad"
	grep -q "malformed ringvm.cmd=" "$work/log"
	malformed=$?
	[ "$status" = 125 ] && [ $malformed = 0 ]
	check $? "malformed ringvm.cmd=$bad is refused with status 125"
done

run "console=ttyS0 ringvm.cmd=sh,-c,exit%205"
! grep -q "running\|status" "$work/log" && [ "$(cat "$work/console")" = "" ]
check $? "without ringvm.verbose=1 PID 1 does not narrate"

run "$V ringvm.cmd=$(enc sh -c 'for m in /proc /sys /run /tmp; do grep -q " $m " /proc/mounts || echo $m; done')"
expect 0 "" "/proc, /sys, /run and /tmp are mounted"

run "$V ringvm.cmd=$(enc printf '[%s]' '' "$(printf 'tab\there')" '100%' 'a,b' '~\' '"' "'" 'x y')"
expect 0 "[][$(printf 'tab\there')][100%][a,b][~\\][\"]['][x y]" "an independent encoder agrees with the decoder"

run "$V ringvm.cmd=true"
[ "$(grep -c "module" "$work/log")" = "$(grep -c . "$work/root/lib/modules/load.order")" ]
check $? "every module in load.order is tried, and a failure does not stop the boot"

# ringvm.mount= and ringvm.root=: virtiofs cannot be mounted in a user namespace, so every real mount
# fails here; that exercises the parsing, the mkdir -p and the failure path, not a working share.
for bad in "tag,/mnt" "tag,/mnt,ro,x" "tag,/mnt,RO" "tag,/mnt,rx" "%,/mnt,ro" "tag,mnt,rw" "tag,/,ro" \
	"tag,/mnt,ro%G1" ""; do
	run "$V ringvm.mount=$bad ringvm.cmd=$(enc sh -c 'echo ran')"
	grep -q "^ringvm-init: malformed ringvm.mount=: " "$work/log"
	malformed=$?
	[ "$status" = 125 ] && [ $malformed = 0 ] && [ ! -s "$work/console" ]
	check $? "malformed ringvm.mount=$bad is refused with status 125 before the command"
done

for bad in "tag" "tag,ro,x" "tag,RW" "%,ro" "tag,%" ""; do
	run "$V ringvm.root=$bad ringvm.cmd=true"
	grep -q "^ringvm-init: malformed ringvm.root=: " "$work/log"
	malformed=$?
	[ "$status" = 125 ] && [ $malformed = 0 ]
	check $? "malformed ringvm.root=$bad is refused with status 125"
done

run "$V ringvm.root=rootfs,ro ringvm.mount=t,/mnt,maybe ringvm.cmd=true"
grep -q "malformed ringvm.mount=" "$work/log" && ! grep -q "virtio-fs" "$work/log" &&
	[ ! -e "$work/root/ringvm" ]
check $? "a malformed ringvm.mount= stops the boot before the root switch touches anything"

run "$V ringvm.mount=$(enc 'my share' '/mnt/deep/er path' rw) ringvm.cmd=$(enc sh -c 'echo ran')"
grep -q "^ringvm-init: cannot mount virtio-fs share 'my share' on /mnt/deep/er path: " "$work/log"
said=$?
[ "$status" = 125 ] && [ $said = 0 ] && [ -d "$work/root/mnt/deep/er path" ] && [ ! -s "$work/console" ]
check $? "a share that fails to mount: mkdir -p done, clear message, status 125, no command"

run "$V ringvm.mount=$(enc t /etc/passwd/sub ro) ringvm.cmd=true"
grep -q "^ringvm-init: cannot create /etc/passwd/sub for virtio-fs share 't': " "$work/log"
check $? "a share PATH that cannot be created is reported (status $status)"
[ "$status" = 125 ]
check $? "and ends the run with status 125 (status $status)"

for mode in ro rw; do
	rm -rf "$work/root/ringvm"
	run "$V ringvm.root=rootfs,$mode ringvm.cmd=$(enc sh -c 'echo ran')"
	grep -q "^ringvm-init: cannot mount virtio-fs share 'rootfs' on /ringvm/" "$work/log"
	said=$?
	[ "$status" = 125 ] && [ $said = 0 ] && [ ! -s "$work/console" ]
	check $? "a $mode root that fails to mount ends the run with status 125 before the command"
done

run "console=ttyS0 ringvm.mount=t,/mnt/x,ro ringvm.cmd=true"
[ "$status" = "" ] && grep -q "^ringvm-init: cannot mount virtio-fs share 't' on /mnt/x: " "$work/log"
check $? "a failed mount is reported even without ringvm.verbose=1"

# run_tty CMDLINE EXPECT INPUT: like run, but the console is a pty (tests/pty-drive runs script(1));
# INPUT is typed once PID 1 has printed EXPECT (it sets the console mode before it says what it
# runs), never after a guessed delay. The console and PID 1's messages both land in $work/log,
# carriage returns kept; $drive_err says why the session did not run to its end, if it did not.
pty_drive=$(cd "$(dirname "$0")/.." && pwd)/pty-drive
run_tty() {
	printf '%s\n' "$1" >"$work/cmdline"
	drive_err=$(cd "$work" && "$pty_drive" --timeout 120 "$work/log" 'unshare -Urpmnf --kill-child sh -c "
			mount -t proc proc root/proc &&
			mount --bind cmdline root/proc/cmdline &&
			mount --bind \$(tty) root/dev/console &&
			mount --bind /dev/null root/dev/null &&
			exec chroot root /init"' "$2" "$3" 2>&1 >/dev/null)
	: >"$work/console"
	[ -z "$drive_err" ] || echo "$drive_err" >>"$work/log"
	status=$(tr -d '\r' <"$work/log" | sed -n 's/^ringvm-init: status \([0-9]*\): .*/\1/p')
}
cr=$(printf '\r')
nl='
'

run_tty "$V ringvm.cmd=$(enc sh -c 'read l; printf "got:%s\n" "$l"; printf "x\ny\n"')" "running sh" "abc$nl"
[ -z "$drive_err" ] && [ "$status" = 0 ] && grep -q '^got:abc$' "$work/log" && grep -q '^x$' "$work/log" &&
	! grep -q '^abc' "$work/log"
check $? "a command's console is raw: no echo, no CR added to its newlines"

run_tty "$V" "interactive shell" "echo hello \$((6*7))${nl}exit 4$nl"
[ -z "$drive_err" ] && [ "$status" = 4 ] && grep -q "^hello 42$cr\$" "$work/log" && grep -q 'echo hello \$((6\*7))' "$work/log"
check $? "without ringvm.cmd= a shell runs on a cooked console (echo, CRLF) and its status 4 comes back"

echo "1..$n"
[ "$failed" = 0 ]
