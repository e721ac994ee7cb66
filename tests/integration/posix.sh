#!/bin/bash
# posix.sh: differential POSIX conformance of virtio-fs (issue 9). tests/posix's program runs on a
# share in the guest (as root and as uid 1000, one boot) and on a directory of the kind that backs
# the share (TMPDIR, as the share is), both on the same kernel in the lab; the two transcripts are
# compared check by check. Any difference fails, unless tests/posix/known-differences lists the
# check with its cause. Needs a KVM that runs Linux (the lab here). Env: RINGVM, CONFORM. TAP.
# posix.sh --host-fuse: no VM; the same server mounted on the host through /dev/fuse
# (build/tests/fuse_host_mount, root only) against a host directory: the fast loop.
set -u
. "$(dirname "$0")/lib.sh"
it_init posix
VM_TIMEOUT=${VM_TIMEOUT:-600}
conform=$(realpath "${CONFORM:-build/tests/posix_conform}")
known=tests/posix/known-differences

# The reference run: a fresh directory next to the share, another file system (a tmpfs of our
# own) for EXDEV.
mkdir -m 755 "$tmp/ref" "$tmp/ref-other" "$tmp/share" "$tmp/other"
mount -t tmpfs -o size=16m,mode=755 ringvm-posix "$tmp/ref-other" || exit 1
it_on_exit 'umount "$tmp/ref-other" 2>/dev/null'
"$conform" "$tmp/ref" "$tmp/ref-other" >"$tmp/ref.txt" 2>"$tmp/ref.err"
check "reference run on the host directory exited 0" test $? = 0

if [ "${1:-}" = --host-fuse ]; then
	label="host FUSE"
	mkdir -m 755 "$tmp/mnt"
	${FUSE_HOST_MOUNT:-build/tests/fuse_host_mount} "$tmp/share" "$tmp/mnt" 4 &
	for _ in $(seq 50); do mountpoint -q "$tmp/mnt" && break; sleep 0.1; done
	it_on_exit 'umount "$tmp/mnt" 2>/dev/null'
	"$conform" "$tmp/mnt" "$tmp/other" >"$tmp/test.txt" 2>"$tmp/err"
	rc=$?
	umount "$tmp/mnt"
	wait
else
	label=guest
	# The guest's protected_* sysctls as the host's: they decide some refusals (the program
	# prints them first, so a mismatch shows there).
	set_sysctls=
	for f in protected_hardlinks protected_symlinks protected_regular protected_fifos; do
		set_sysctls="$set_sysctls echo $(cat /proc/sys/fs/$f) >/proc/sys/fs/$f;"
	done
	# The binary from the second share, not from the checkout through --root /: in the lab the
	# checkout is 9p, whose short reads the guest does not survive yet (issue 9, first part).
	cp "$conform" "$tmp/other/conform"
	vm --root / --share "$tmp/share:/mnt" --share "$tmp/other:/mnt2" -- \
		sh -c "$set_sysctls mkdir -m 755 /mnt2/x && exec /mnt2/conform /mnt /mnt2/x >/mnt2/transcript"
	cp "$tmp/other/transcript" "$tmp/test.txt" 2>/dev/null || : >"$tmp/test.txt"
fi
check "$label run exited 0" test "$rc" = 0
dups=$(cut -d: -f1 "$tmp/ref.txt" | sort | uniq -d | head -n 3)
check "every check has its own name ${dups:+(duplicates: $dups)}" test -z "$dups"
check "the reference transcript has its checks ($(wc -l <"$tmp/ref.txt") lines)" \
	test "$(wc -l <"$tmp/ref.txt")" -ge 700

# One TAP check per transcript line: "NAME: RESULT".
declare -A ref_of test_of why_of
while IFS= read -r line; do ref_of[${line%%: *}]=${line#*: }; done <"$tmp/ref.txt"
while IFS= read -r line; do test_of[${line%%: *}]=${line#*: }; done <"$tmp/test.txt"
while read -r name why; do
	case $name in "" | "#"*) continue ;; esac
	why_of[$name]=$why
done <"$known"
cmp_line() { # cmp_line NAME
	local name=$1 r=${ref_of[$1]-(missing)} t=${test_of[$1]-(missing)}
	if [ "$r" = "$t" ]; then
		[ -z "${why_of[$name]+x}" ] || echo "# listed in $known but no longer differs: $name"
		ok "$name: $r"
	elif [ -n "${why_of[$name]+x}" ]; then
		ok "$name: known difference (host: $r; $label: $t): ${why_of[$name]}"
	else
		notok "$name: host: $r; $label: $t"
	fi
}
while IFS= read -r line; do cmp_line "${line%%: *}"; done <"$tmp/ref.txt"
while IFS= read -r line; do
	[ -n "${ref_of[${line%%: *}]+x}" ] || cmp_line "${line%%: *}"
done <"$tmp/test.txt"
it_done
