#!/bin/bash
# posix.sh: differential POSIX conformance of virtio-fs (issue 9). tests/posix's program runs on
# shares in the guest, one per cache mode (auto, never, always), as root and as uid 1000, all in
# one boot; and once on a directory of the kind that backs the shares (TMPDIR, as the shares are),
# on the same kernel in the lab. Each guest transcript is compared with that reference check by
# check: any difference fails, unless tests/posix/known-differences lists the check with its cause.
# Needs a KVM that runs Linux (the lab here). Env: RINGVM, CONFORM. TAP.
# posix.sh --host-fuse: no VM; the same server mounted on the host through /dev/fuse
# (build/tests/fuse_host_mount, root only) in each cache mode: the fast loop.
set -u
. "$(dirname "$0")/lib.sh"
it_init posix
VM_TIMEOUT=${VM_TIMEOUT:-600}
conform=$(realpath "${CONFORM:-build/tests/posix_conform}")
known=tests/posix/known-differences
modes="auto never always"

# The reference run: a fresh directory next to the shares, another file system (a tmpfs of our
# own) for EXDEV.
mkdir -m 755 "$tmp/ref" "$tmp/ref-other" "$tmp/other"
if mount -t tmpfs -o size=16m,mode=755 ringvm-posix "$tmp/ref-other" 2>/dev/null; then
	it_on_exit 'umount "$tmp/ref-other" 2>/dev/null'
	ref_other=$tmp/ref-other
else # not root: /dev/shm, when it is another file system
	ref_other=$(mktemp -d /dev/shm/ringvm-posix.XXXXXX) && chmod 755 "$ref_other" &&
		it_on_exit 'rm -rf "$ref_other"'
fi
"$conform" "$tmp/ref" "$ref_other" >"$tmp/ref.txt" 2>"$tmp/ref.err"
ref_rc=$?
check "reference run on the host directory exited 0 $(head -c 200 "$tmp/ref.err")" test "$ref_rc" = 0
dups=$(cut -d: -f1 "$tmp/ref.txt" | sort | uniq -d | head -n 3)
check "every check has its own name ${dups:+(duplicates: $dups)}" test -z "$dups"
check "the reference transcript has its checks ($(wc -l <"$tmp/ref.txt") lines)" \
	test "$(wc -l <"$tmp/ref.txt")" -ge 700
for m in $modes; do mkdir -m 755 "$tmp/share-$m" "$tmp/other/x-$m"; done

if [ "${1:-}" = --host-fuse ]; then
	label="host FUSE"
	for m in $modes; do
		mkdir -m 755 "$tmp/mnt"
		${FUSE_HOST_MOUNT:-build/tests/fuse_host_mount} "$tmp/share-$m" "$tmp/mnt" 4 "$m" dev suid xattr=all &
		for _ in $(seq 50); do mountpoint -q "$tmp/mnt" && break; sleep 0.1; done
		"$conform" "$tmp/mnt" "$tmp/other/x-$m" >"$tmp/other/transcript-$m" ||
			echo "conform-failed: $m $?" >>"$tmp/out"
		umount "$tmp/mnt"
		wait
		rmdir "$tmp/mnt"
	done
	rc=0
	[ ! -s "$tmp/out" ] || rc=1
else
	label=guest
	# The guest's protected_* sysctls as the host's: they decide some refusals (the program
	# prints them first, so a mismatch shows there).
	cmd=
	for f in protected_hardlinks protected_symlinks protected_regular protected_fifos; do
		cmd="$cmd echo $(cat /proc/sys/fs/$f) >/proc/sys/fs/$f;"
	done
	shares=()
	for m in $modes; do
		# dev, suid and xattr=all: the program makes device nodes, setuid/setgid files and
		# trusted.* attributes, which a share allows only where its user says so (the default
		# refuses, strips and hides them).
		shares+=(--share "$tmp/share-$m:/mnt-$m,cache=$m,dev,suid,xattr=all")
		cmd="$cmd /mnt2/conform /mnt-$m /mnt2/x-$m >/mnt2/transcript-$m || echo conform-failed: $m \$?;"
	done
	# The binary from a share, not from the checkout through --root /: it must not depend on
	# the checkout's file system (9p in the lab).
	cp "$conform" "$tmp/other/conform"
	vm --root / "${shares[@]}" --share "$tmp/other:/mnt2" -- sh -c "$cmd"
	! grep -q "^conform-failed:" "$tmp/out" || rc=1
fi
check "$label runs (cache=${modes// /, }) exited 0" test "$rc" = 0

# One TAP check per transcript line and cache mode: "NAME: RESULT".
declare -A ref_of test_of why_of
while IFS= read -r line; do ref_of[${line%%: *}]=${line#*: }; done <"$tmp/ref.txt"
while read -r name why; do
	case $name in "" | "#"*) continue ;; esac
	why_of[$name]=$why
done <"$known"
cmp_line() { # cmp_line MODE NAME: the known-differences entry is "NAME" (any mode) or "MODE:NAME"
	local m=$1 name=$2 r=${ref_of[$2]-(missing)} t=${test_of[$2]-(missing)} why=
	if [ -n "${why_of[$m:$name]+x}" ]; then
		why=${why_of[$m:$name]}
	elif [ -n "${why_of[$name]+x}" ]; then
		why=${why_of[$name]}
	fi
	if [ "$r" = "$t" ]; then
		[ -z "$why" ] || echo "# listed in $known but no longer differs with cache=$m: $name"
		ok "cache=$m: $name: $r"
	elif [ -n "$why" ]; then
		ok "cache=$m: $name: known difference (host: $r; $label: $t): $why"
	else
		notok "cache=$m: $name: host: $r; $label: $t"
	fi
}
for m in $modes; do
	test_of=()
	[ -f "$tmp/other/transcript-$m" ] || : >"$tmp/other/transcript-$m"
	while IFS= read -r line; do test_of[${line%%: *}]=${line#*: }; done <"$tmp/other/transcript-$m"
	while IFS= read -r line; do cmp_line "$m" "${line%%: *}"; done <"$tmp/ref.txt"
	while IFS= read -r line; do
		[ -n "${ref_of[${line%%: *}]+x}" ] || cmp_line "$m" "${line%%: *}"
	done <"$tmp/other/transcript-$m"
done
it_done
