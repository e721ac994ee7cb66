#!/bin/bash
# attack.sh: hostile-guest attack cases (firmware/attack) through the real CLI, one ringvm per case.
#
# Each case is a tiny guest that drives ringvm's virtio-mmio devices directly: it first proves it
# reached the code under attack (a legitimate request answered correctly), attacks, then proves the
# device still answers (or is in NEEDS_RESET, as documented) and reports through the exit port.
# After each case this script checks, on the host:
#   - ringvm exited with the payload's PASS status (not a signal, not a crash status, no hang: an
#     outer timeout), and printed no sanitizer report;
#   - disk 0 (read-write) changed only in its scratch sectors, disk 1 (read-only) not at all;
#   - nothing outside the share was read, written or created: a sibling directory with a canary
#     keeps its listing, atime, mtime and ctime; the share's parent gains nothing; the share's files
#     outside scratch/ are unchanged.
# Env: RINGVM (the binary), ATTACK_ELF (default build/firmware/attack.elf), CASES (names; default:
# every case the payload knows). TAP output.
set -u
ringvm=${RINGVM:-build/ringvm}
elf=${ATTACK_ELF:-build/firmware/attack.elf}
# The payload is tiny freestanding code, which PVM runs: allow it.
export RINGVM_ALLOW_PVM=1
# Statuses of firmware/attack/rt.h.
PASS=80
# Geometry of firmware/attack/vblk.h: 2048 sectors; sectors [128, 256) are the scratch region.
IMG_BYTES=$((2048 * 512))
SCRATCH_START=$((128 * 512))
SCRATCH_END=$((256 * 512))
MIN_CASES=40

work=$(mktemp -d /tmp/ringvm-attack.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The image: byte at offset o is (o*7 + (o>>9)*13 + 1) mod 256 (img_byte() in vblk.h).
perl -e 'for $s (0..2047) { $b = ""; for $i (0..511) { $o = $s * 512 + $i;
	$b .= chr(($o * 7 + ($o >> 9) * 13 + 1) & 255) } print $b }' >"$work/master.img"
[ "$(stat -c %s "$work/master.img")" = "$IMG_BYTES" ] || { echo "Bail out! image generation"; exit 1; }
cp "$work/master.img" "$work/ro.img"

# The share (vfuse.h) and, beside it, what a guest must never reach.
top=$work/top
mkdir -p "$top/share/dir" "$top/share/scratch" "$top/outside"
printf 'hello from the share\n' >"$top/share/hello.txt"
printf 'inner\n' >"$top/share/dir/inner.txt"
ln -s ../outside/canary.txt "$top/share/link_out"
printf 'canary: the guest must never see this\n' >"$top/outside/canary.txt"
# Old times: a read of the canary would move its atime (relatime updates atimes older than a day).
touch -h -d '2001-01-01 00:00:00' "$top/outside/canary.txt" "$top/outside" "$top/share/link_out"

# What must not change: everything outside the share with every time stamp; the share's files
# outside scratch/ with their contents (their atimes may move: reading them is legal). One find and
# one md5sum: in the KVM lab every program started costs ~0.1 s, and this runs after every case.
# Unsorted: readdir's order is stable while a directory is unchanged, and a changed one differs anyway.
snapshot() {
	(
		cd "$top" || exit 1
		find . -path ./share/scratch -prune -o \
			\( -path ./share -o -path './share/*' \) -printf '%p %y %m %s %i %T@ %l\n' \
			\( -type f -exec md5sum {} + -o -true \) -o \
			-type d -printf '%p %y %m %i %T@ %C@\n' -o -printf '%p %y %m %s %i %A@ %T@ %C@ %l\n'
	)
}

cases=${CASES:-$(timeout 20 "$ringvm" run --kernel "$elf" --initrd none --memory 64M \
	--cmdline attack=list 2>/dev/null | sed -n 's/.*cases://p')}
# shellcheck disable=SC2116,SC2086 # one line, words split on purpose
cases=$(echo $cases)
count=$(echo "$cases" | tr ' ' '\n' | grep -vc '^check_')
n=0
fails=0
if [ -z "${CASES:-}" ]; then
	n=1
	if [ "$count" -ge "$MIN_CASES" ]; then
		echo "ok $n - the payload knows $count cases (at least $MIN_CASES)"
	else
		echo "not ok $n - the payload knows $count cases, fewer than $MIN_CASES"
		fails=$((fails + 1))
	fi
fi

# Extra ringvm arguments per case. Every case gets disk 0 (read-write, 4 queues), disk 1
# (read-only) and the share (2 request queues); the default machine has 64 MiB.
case_args() {
	case $1 in
	rings_high_ram) echo "--memory 3200M" ;;
	*) echo "--memory 64M" ;;
	esac
}
disk0_opts() {
	case $1 in
	blk_direct_unaligned) echo ",direct=on" ;;
	esac
}

# run_case NAME: one ringvm for case NAME; sets $why to what went wrong ("" when nothing did).
# $baseline is the snapshot every case must leave as it found: taken again (after the canary's atime
# is made old once more, so that relatime records a read) only after a case that changed something.
baseline=
run_case() {
	local c=$1 rc after
	cp "$work/master.img" "$work/rw.img"
	if [ -z "$baseline" ]; then
		touch -a -d '2001-01-01 00:00:00' "$top/outside/canary.txt"
		baseline=$(snapshot)
	fi
	# shellcheck disable=SC2046
	timeout -k 5 60 "$ringvm" run --kernel "$elf" --initrd none $(case_args "$c") \
		--disk "$work/rw.img,queues=4$(disk0_opts "$c")" --disk "$work/ro.img,readonly" \
		--share "$top/share:/share,queues=2" --cmdline "attack=$c" >"$work/out" 2>"$work/err"
	rc=$?
	why=""
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="hung (killed by the outer timeout)"
	elif [ "$rc" != "$PASS" ]; then
		why="exit status $rc, want $PASS"
	elif ! grep -q "attack: PASS $c" "$work/out"; then
		why="no PASS line on the console"
	fi
	if [ -s "$work/err" ] && grep -qE 'Sanitizer|runtime error:|LeakSanitizer' "$work/err"; then
		why="$why${why:+; }sanitizer report"
	fi
	if [ "$(stat -c %s "$work/rw.img")" != "$IMG_BYTES" ] ||
		! cmp -s -n "$SCRATCH_START" "$work/rw.img" "$work/master.img" ||
		! cmp -s -i "$SCRATCH_END" "$work/rw.img" "$work/master.img"; then
		why="$why${why:+; }disk 0 changed outside its scratch sectors"
	fi
	if ! cmp -s "$work/ro.img" "$work/master.img"; then
		why="$why${why:+; }the read-only disk changed"
		cp "$work/master.img" "$work/ro.img"
	fi
	after=$(snapshot)
	if [ "$baseline" != "$after" ]; then
		# (Files, not <(...): the KVM lab's /dev has no /dev/fd.)
		echo "$baseline" >"$work/snap.before"
		echo "$after" >"$work/snap.after"
		why="$why${why:+; }the host outside the share (or the share's files) changed: $(diff "$work/snap.before" "$work/snap.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
		baseline=
	fi
	# What the case left in the share: scratch/ emptied (or made a plain folder again), an intruder
	# removed; a program runs only when there is something to undo.
	if share_dirty; then
		rm -rf "$top/share/scratch" "$top/share/intruder" && mkdir "$top/share/scratch"
		baseline=
	fi
}
share_dirty() { # true when scratch/ is not an empty folder or the intruder exists (builtins only)
	local f
	[ -d "$top/share/scratch" ] && [ ! -L "$top/share/scratch" ] || return 0
	for f in "$top/share/scratch/"* "$top/share/scratch/".[!.]* "$top/share/scratch/"..?* "$top/share/intruder"; do
		[ -e "$f" ] || [ -L "$f" ] && return 0
	done
	return 1
}

report() { # report DESCRIPTION: ok when $why is empty
	if [ -z "$why" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1: $why"
		sed 's/^/#   console: /' "$work/out" | tail -n 5
		sed 's/^/#   stderr: /' "$work/err" | head -n 20
		fails=$((fails + 1))
	fi
}

# The checks can fail: a host-side read of the canary moves what the snapshot records, and two
# payload cases that write legally where no attack may write are flagged.
n=$((n + 1))
before=$(snapshot)
cat "$top/outside/canary.txt" >/dev/null
why=""
[ "$before" != "$(snapshot)" ] || why="a read of the canary went unseen (no atime updates here?)"
report "the snapshot sees a read of the canary"
for check in "check_disk_write:disk 0 changed outside" "check_share_create:the share's files) changed"; do
	n=$((n + 1))
	run_case "${check%%:*}"
	case $why in
	*"${check#*:}"*) why="" ;;
	*) why="not flagged (got: ${why:-nothing})" ;;
	esac
	report "the host check flags ${check%%:*}"
done

start=$(date +%s.%N)
for c in $cases; do
	case $c in check_*) continue ;; esac
	n=$((n + 1))
	run_case "$c"
	report "$c"
done
end=$(date +%s.%N)
echo "# $count cases in $(awk "BEGIN { print $end - $start }") s with $ringvm"
echo "1..$n"
[ "$fails" = 0 ]
