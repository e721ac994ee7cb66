#!/bin/bash
# jail.sh: ringvm run --jail (vmm/jail.h) with firmware payloads on this machine's /dev/kvm: the
# jailed VMM is PID 1 of its own PID namespace, in its own mount, network, IPC and UTS namespaces,
# sees only its kernel, disks, shares, /dev/kvm, /dev/null and /proc, keeps no inherited fd, dumps
# no core, runs as --uid/--gid; its disk, share and streams still work; SIGTERM to ringvm ends it.
# Root only.
# Env: RINGVM (the binary), FIRMWARE_DIR (default build/firmware). TAP output.
set -u
. "$(dirname "$0")/lib.sh"
ringvm=${RINGVM:-build/ringvm}
fw=${FIRMWARE_DIR:-build/firmware}
export RINGVM_ALLOW_PVM=1
PASS=80 # firmware/attack/rt.h
n=0
fails=0
if [ "$(id -u)" != 0 ]; then
	echo "ok 1 # SKIP needs root: --jail makes namespaces and mounts"
	echo "1..1"
	exit 0
fi
tmp=$(mktemp -d /tmp/ringvm-jailtest.XXXXXX)
# Jail mount points another run left in /tmp (one killed before it could remove its own): only the
# ones this script's VMs make must be gone when they end.
jails_before=$(ls -d /tmp/ringvm-jail-* 2>/dev/null)
pid=
cleanup() {
	[ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1${3:+ ($3)}"; fi; }

# The attack payload's machine (firmware/attack: vblk.h, vfuse.h): disk 0 read-write with the
# image pattern, disk 1 read-only, a share holding hello.txt and dir/inner.txt.
perl -e 'for $s (0..2047) { $b = ""; for $i (0..511) { $o = $s * 512 + $i;
	$b .= chr(($o * 7 + ($o >> 9) * 13 + 1) & 255) } print $b }' >"$tmp/master.img"
mkdir -p "$tmp/share/dir" "$tmp/share/scratch"
printf 'hello from the share\n' >"$tmp/share/hello.txt"
printf 'inner\n' >"$tmp/share/dir/inner.txt"
machine() { # machine: copy fresh images (owned by $OWNER when set), print the disk and share options
	cp "$tmp/master.img" "$tmp/rw.img"
	cp "$tmp/master.img" "$tmp/ro.img"
	[ -z "${OWNER:-}" ] || chown "$OWNER" "$tmp/rw.img" "$tmp/ro.img"
	echo "--disk $tmp/rw.img,queues=4 --disk $tmp/ro.img,readonly --share $tmp/share:/share,queues=2"
}

# Bad command lines: one line, 125.
"$ringvm" run --kernel "$fw/exit.elf" --initrd none --uid 1 --gid 1 >/dev/null 2>"$tmp/err"
rc=$?
check "--uid without --jail: refused, one line, 125" '[ $rc = 125 ] && [ "$(wc -l <"$tmp/err")" = 1 ]' "rc $rc: $(cat "$tmp/err")"
"$ringvm" run --kernel "$fw/exit.elf" --initrd none --jail --uid 65534 >/dev/null 2>"$tmp/err"
rc=$?
check "--uid without --gid: refused, one line, 125" '[ $rc = 125 ] && grep -q "go together" "$tmp/err"' "rc $rc: $(cat "$tmp/err")"
"$ringvm" run --kernel "$tmp/no-such-kernel" --initrd none --jail >/dev/null 2>"$tmp/err"
rc=$?
check "a kernel that does not exist: one line naming it, 125" \
	'[ $rc = 125 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "no-such-kernel" "$tmp/err"' "rc $rc: $(cat "$tmp/err")"
setpriv --reuid=65534 --regid=65534 --clear-groups "$ringvm" run --kernel "$fw/exit.elf" --initrd none --jail \
	>/dev/null 2>"$tmp/err"
rc=$?
check "--jail without root: refused, one line, 125" '[ $rc = 125 ] && grep -q "needs root" "$tmp/err"' "rc $rc: $(cat "$tmp/err")"

# The exit status comes back through the parent.
timeout 30 "$ringvm" run --kernel "$fw/exit.elf" --initrd none --memory 64M --jail >"$tmp/out" 2>"$tmp/err"
rc=$?
check "exit payload in the jail: status 42 through the parent" '[ $rc = 42 ] && grep -q "hello from firmware" "$tmp/out"' "rc $rc: $(cat "$tmp/err")"
# A command (the payload ignores it) makes the streams: virtio-console ports on duplicates of the
# jailed VMM's stdio, and /dev/null for the CLI's own stdout, inside the jail. The serial console
# then goes to stderr.
timeout 30 "$ringvm" run --kernel "$fw/exit.elf" --initrd none --memory 64M --jail -T -- true \
	</dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a command's streams in the jail: status 42, the console on stderr" \
	'[ $rc = 42 ] && grep -q "hello from firmware" "$tmp/err" && [ ! -s "$tmp/out" ]' "rc $rc: $(cat "$tmp/err")"

# A running jailed VMM, inspected from the host. ARGS: extra ringvm arguments.
inspect() {
	local desc=$1 want_uid=$2
	shift 2
	rm -f "$tmp/out"
	# shellcheck disable=SC2046
	"$ringvm" run --kernel "$fw/halt.elf" --initrd none --memory 64M --jail $(machine) "$@" \
		>"$tmp/out" 2>"$tmp/err" </dev/null 7</etc/hostname &
	pid=$!
	local i=0 child=
	# Wait until the guest printed (the VMM runs); not a verdict.
	while ! grep -q hello "$tmp/out" 2>/dev/null && [ $i -lt 400 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	child=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null | awk '{ print $1 }')
	if [ -z "$child" ]; then
		bad "$desc: a jailed VMM under ringvm's pid $pid ($(cat "$tmp/err"))"
	else
		local ns differ=""
		for ns in mnt pid net ipc uts; do
			[ "$(readlink "/proc/$child/ns/$ns")" != "$(readlink "/proc/self/ns/$ns")" ] || differ="$differ $ns"
		done
		check "$desc: new mount, PID, network, IPC and UTS namespaces" '[ -z "$differ" ]' "shared:$differ"
		check "$desc: it is PID 1 of its namespace" \
			'[ "$(awk "/^NSpid:/ { print \$NF }" "/proc/$child/status")" = 1 ]'
		# Its root: the paths the command line names (the firmware under this checkout, the
		# images and the share under $tmp), /dev/kvm, /proc; /sys only for the PVM check.
		local want="dev proc$([ -d /sys/module/kvm_pvm ] && echo " sys") tmp $(pwd | cut -d/ -f2)"
		local have
		have=$(ls -A "/proc/$child/root" | sort | tr '\n' ' ')
		want=$(echo "$want" | tr ' ' '\n' | sort -u | tr '\n' ' ')
		check "$desc: its root holds only what the VM needs ($have)" '[ "$have" = "$want" ]' "want $want"
		check "$desc: /tmp there is only the test's directory; no /etc/passwd, no /bin" \
			'[ "$(ls -A "/proc/$child/root/tmp")" = "$(basename "$tmp")" ] &&
			 [ ! -e "/proc/$child/root/etc/passwd" ] && [ ! -e "/proc/$child/root/bin" ]'
		check "$desc: /dev there holds kvm, owned by uid $want_uid, and null" \
			'[ "$(ls -A "/proc/$child/root/dev" | xargs)" = "kvm null" ] &&
			 [ "$(stat -c %u "/proc/$child/root/dev/kvm")" = "$want_uid" ]'
		check "$desc: the fd 7 ringvm was started with is not inherited" \
			'! ls -l "/proc/$child/fd" | grep -q /etc/hostname'
		check "$desc: no core dumps (RLIMIT_CORE 0)" \
			'grep -Eq "^Max core file size +0 +0 " "/proc/$child/limits"'
		check "$desc: only a loopback interface; hostname ringvm" \
			'[ "$(awk -F: "NR > 2 { gsub(/ /, \"\", \$1); print \$1 }" "/proc/$child/net/dev")" = lo ] &&
			 [ "$(nsenter -t "$child" -u hostname)" = ringvm ]'
		local ids
		ids=$(awk '/^Uid:|^Gid:/ { print $2 $3 $4 $5 } /^Groups:/ { print "g" $2 } /^CapEff:/ { print $2 }' \
			"/proc/$child/status" | tr '\n' ' ')
		local cap=0000000000000000
		[ "$want_uid" = 0 ] && cap=$(awk '/^CapEff:/ { print $2 }' "/proc/$child/status")
		check "$desc: runs as uid/gid $want_uid, no supplementary group, CapEff $cap" \
			'[ "$ids" = "$want_uid$want_uid$want_uid$want_uid $want_uid$want_uid$want_uid$want_uid g $cap " ]' "$ids"
	fi
	stop_bounded "$pid"
	check "$desc: SIGTERM to ringvm ends the jailed VMM (status 143)" '[ "$stop_status" = 143 ]' \
		"status $stop_status"
	pid=
	check "$desc: the jail's mount point is gone from /tmp" \
		'[ "$(ls -d /tmp/ringvm-jail-* 2>/dev/null)" = "$jails_before" ]' "$(ls -d /tmp/ringvm-jail-* 2>/dev/null)"
}
inspect "as root" 0
# An unprivileged user's VMM: its disks and share are its own, /dev/kvm the jail makes for it.
chown -R 65534:65534 "$tmp/share"
OWNER=65534:65534 inspect "as --uid 65534 --gid 65534" 65534 --uid 65534 --gid 65534

# The devices work from inside: a legitimate disk write and a file created in the share.
attack() { # attack CASE [ringvm args]
	local c=$1
	shift
	# shellcheck disable=SC2046
	timeout -k 5 60 "$ringvm" run --kernel "$fw/attack.elf" --initrd none --memory 64M --jail $(machine) \
		--cmdline "attack=$c" "$@" >"$tmp/out" 2>"$tmp/err"
}
for who in root nobody; do
	args="" OWNER=""
	[ "$who" = nobody ] && args="--uid 65534 --gid 65534" OWNER=65534:65534
	rm -f "$tmp/share/intruder"
	# shellcheck disable=SC2086
	attack check_disk_write $args
	rc=$?
	check "as $who: a disk write from the jailed VMM reaches the image (status $rc)" \
		'[ $rc = $PASS ] && ! cmp -s "$tmp/rw.img" "$tmp/master.img"' "$(tail -n 2 "$tmp/out") $(cat "$tmp/err")"
	# shellcheck disable=SC2086
	attack check_share_create $args
	rc=$?
	want=0
	[ "$who" = nobody ] && want=65534
	check "as $who: a file created through the share lands in it, owned by uid $want (status $rc)" \
		'[ $rc = $PASS ] && [ "$(stat -c %u "$tmp/share/intruder" 2>/dev/null)" = $want ]' \
		"$(tail -n 2 "$tmp/out") $(cat "$tmp/err")"
done
echo "1..$n"
[ "$fails" = 0 ]
