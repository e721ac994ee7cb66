#!/bin/bash
# vhost_user.sh: `ringvm serve` as QEMU's vhost-user back-ends (issue 10): one QEMU microvm boots the
# Debian guest with its root, a shared directory and two disks all served by ringvm processes, and runs
# fs.sh's POSIX and untar checks and blk.sh's ext4 and fio-verify checks; the host checks the results.
# Needs a KVM that runs Linux (the lab here; QEMU_ACCEL=tcg runs it anywhere, slowly). Env: RINGVM,
# KERNEL, INITRD. TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init vhostuser
kernel=${KERNEL:-build/guest/kernel/vmlinuz}
initrd=${INITRD:-build/guest/initramfs.img}
accel=${QEMU_ACCEL:-kvm}
machine=microvm
cpu=host
append=
if [ "$accel" != kvm ]; then
	# Under TCG the kernel calibrates its clock on the PIT: microvm leaves it out by default.
	cpu=max
	machine=microvm,pit=on,pic=on,rtc=on
	append="tsc=reliable no_timer_check tsc_early_khz=2000000"
fi
exit_port=$(sed -n 's/^#define RINGVM_EXIT_PORT \(0x[0-9a-f]*\)$/\1/p' guest/protocol.h)

# --- the back-ends: four `ringvm serve` processes ------------------------------------------------
S=$tmp/share
mkdir "$S"
ext4=$tmp/ext4.img
raw=$tmp/fio.img
truncate -s 256M "$ext4"
truncate -s 128M "$raw"
servers=()
running() { # running PID: it has not ended (an ended child not yet waited for is a zombie)
	local st
	IFS= read -r st 2>/dev/null <"/proc/$1/stat" || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}
it_on_exit 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done'
serve() { # serve NAME ARGS...: ringvm serve ARGS in the background, once its socket is there
	local name=$1 i
	shift
	"$ringvm" serve "$@" --socket "$tmp/$name.sock" 2>"$tmp/$name.err" &
	servers+=($!)
	for i in $(seq 1 200); do
		[ -S "$tmp/$name.sock" ] && return 0
		kill -0 "${servers[-1]}" 2>/dev/null || break
		sleep 0.05
	done
	notok "ringvm serve $name did not start: $(cat "$tmp/$name.err")"
	it_done
}
# The guest's root is the host's / (read-only, a tmpfs overlay in the guest, as ringvm run --root /):
# it brings mkfs.ext4, fio and GNU tar.
serve root fs --shared-dir / --readonly
serve share fs --shared-dir "$S"
serve ext4 blk --disk "$ext4,id=vu-ext4"
serve fio blk --disk "$raw,id=vu-fio"
ok "four ringvm serve processes listen (root and share over virtio-fs, two disks)"

# --- what the guest runs ---------------------------------------------------------------------------
. "$(dirname "$0")/fs_posix.inc"
fs_posix_script "$S/posix.sh"
mkdir "$S/p" "$S/untar" "$tmp/ref"
tar -C /usr/include -cf "$S/src.tar" linux
tar -C "$tmp/ref" -xf "$S/src.tar"
cat >"$S/guest.sh" <<'EOF'
disk() { # the /dev node whose virtio-blk serial (GET_ID) is $1
	for d in /sys/block/vd*; do
		[ "$(cat "$d/serial" 2>/dev/null)" = "$1" ] && { echo "/dev/${d##*/}"; return; }
	done
}
e=$(disk vu-ext4)
r=$(disk vu-fio)
echo "DISKS $e $r"
# blk.sh 1: an ext4 file system made and written by the guest, checked on the host.
mkdir -p /disk
mkfs.ext4 -q "$e" && mount -t ext4 "$e" /disk && echo "hello from the guest" >/disk/hello &&
	mkdir -p /disk/dir/sub && i=0 && while [ $i -lt 200 ]; do echo "file $i" >/disk/dir/sub/f$i; i=$((i + 1)); done &&
	dd if=/dev/urandom of=/disk/big bs=1M count=8 2>/dev/null && sync && sha256sum /disk/big && umount /disk &&
	echo EXT4_DONE
# blk.sh 5: fio with crc32c verification, 2 jobs x iodepth 16, on the raw disk.
fio --name=verify --filename="$r" --rw=randwrite --bs=4k --size=16M --offset_increment=64M \
	--numjobs=2 --iodepth=16 --ioengine=libaio --direct=1 --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --group_reporting --eta=never --output=/tmp/fio.out 2>/tmp/fio.err
echo "FIO_STATUS $?"
grep -o "err= *[0-9]*" /tmp/fio.out | head -n 1 | tr -d " " | sed "s/^/FIO_/"
# fs.sh: the POSIX script and an untar, on the share.
sh /mnt/posix.sh /mnt
tar -C /mnt/untar -xf /mnt/src.tar && sync && echo "UNTAR $(find /mnt/untar -type f | wc -l)"
echo GUEST_DONE
EOF

# --- one boot -------------------------------------------------------------------------------------
# Two vCPUs: with one, QEMU's guest stood still in fio in 3 of 4 lab runs (not understood yet: the
# same fio on ringvm's own virtio-blk with one vCPU passes; see the 2026-12-02 note). The wedges
# seen with two came before the lab's periodic tick.
qemu-system-x86_64 -qmp "unix:$tmp/qmp.sock,server=on,wait=off" -accel "$accel" -cpu "$cpu" -M "$machine" -m 1G -smp 2 \
	-nodefaults -no-user-config -display none -serial stdio -no-reboot \
	-global virtio-mmio.force-legacy=false \
	-object memory-backend-memfd,id=mem,size=1G,share=on -machine memory-backend=mem \
	-device "isa-debug-exit,iobase=$exit_port,iosize=1" \
	-chardev "socket,id=root,path=$tmp/root.sock" -device vhost-user-fs-device,chardev=root,tag=root \
	-chardev "socket,id=share,path=$tmp/share.sock" -device vhost-user-fs-device,chardev=share,tag=share \
	-chardev "socket,id=ext4,path=$tmp/ext4.sock" -device vhost-user-blk,chardev=ext4,num-queues=1 \
	-chardev "socket,id=fio,path=$tmp/fio.sock" -device vhost-user-blk,chardev=fio,num-queues=1 \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 quiet loglevel=0 panic=-1 $append ringvm.root=root,ro ringvm.mount=share,/mnt,rw ringvm.cmd=sh,/mnt/guest.sh" \
	</dev/null >"$tmp/out" 2>"$tmp/err" &
qemu=$!
# A guest that stood still (VM_TIMEOUT, or this script stopped by SIGTERM: run-all's stall-watch
# does that after minutes of an idle lab): what every virtqueue and local APIC holds is said before
# QEMU is ended: requests in an avail ring, replies in a used ring, interrupts pending (qmp-virtio.py).
qmp_stop() {
	local i
	python3 "$(dirname "$0")/qmp-virtio.py" "$tmp/qmp.sock" >"$tmp/qmp" 2>&1
	kill "$qemu" 2>/dev/null
	# QEMU stops its vhost-user devices on the way out and waits for each back-end's reply: one
	# that stands still (stopped, or wedged) would hold it forever.
	for i in $(seq 1 100); do
		running "$qemu" || return 0
		sleep 0.1
	done
	echo "# QEMU did not end within 10 s of SIGTERM (a back-end that does not answer holds it): SIGKILL"
	kill -KILL "$qemu" 2>/dev/null
}
serve_jiffies() { # the CPU time every ringvm serve used so far, all threads (builtins only)
	local p line a sum=0
	for p in "${servers[@]}"; do
		IFS= read -r line 2>/dev/null <"/proc/$p/stat" || continue
		read -r -a a <<<"${line##*) }"
		sum=$((sum + a[11] + a[12]))
	done
	echo "$sum"
}
# Every step of the guest asks the back-ends (its root is one of the shares): when none of them used
# CPU for STILL_S seconds, the guest stood still. stall-watch sees that only when QEMU's vCPUs halt
# too; a guest that spins (a vCPU waiting on the other one, seen in CI with 600 s gone and no stall
# said) kept L1 busy. What the rings hold then tells whose fault it is: every ring balanced, every
# back-end alive and silent is the guest's own ("lab-stall": tests/run gives the job another lab); a
# request left with a back-end, or a back-end gone or complaining, is ringvm's ("backend-stall": never
# tried again); a reply the driver did not see (its used_event behind) may be either's, said as is.
(
	base=$(serve_jiffies) since=$SECONDS
	for _ in $(seq 1 "${VM_TIMEOUT:-600}"); do
		kill -0 "$qemu" 2>/dev/null || exit 0
		sleep 1
		now=$(serve_jiffies)
		if [ $((now - base)) -gt 2 ]; then
			base=$now since=$SECONDS
		elif [ $((SECONDS - since)) -ge "${STILL_S:-120}" ]; then
			qmp_stop
			verdict=$(sed -n 's/^qmp: verdict: //p' "$tmp/qmp")
			alive="alive"
			for p in "${servers[@]}"; do running "$p" || alive="not all alive"; done
			said=$(cat "$tmp/root.err" "$tmp/share.err" "$tmp/ext4.err" "$tmp/fio.err" | head -c 300)
			what="QEMU's guest asked ringvm's back-ends nothing for ${STILL_S:-120} s: rings ${verdict:-unread}; back-ends $alive${said:+, one said: $said}"
			if [ "$verdict" = balanced ] && [ "$alive" = alive ] && [ -z "$said" ]; then
				echo "lab-stall: idle: $what: the guest stood still"
			elif [[ $verdict == *"with the back-end"* ]] || [ "$alive" != alive ] || [ -n "$said" ]; then
				# Requests a back-end took no notice of, or a back-end gone or complaining: ringvm's
				# fault, whatever else the lab did (tests/run does not try it again).
				echo "backend-stall: $what"
			else
				# Replies the driver did not see: an interrupt ringvm did not send or the lab lost.
				echo "# $what"
			fi
			exit 0
		fi
	done
	qmp_stop
) &
stopped=
trap 'stopped=1' TERM
wait "$qemu"
rc=$?
if [ -n "$stopped" ]; then
	qmp_stop
	wait "$qemu"
fi
trap - TERM
[ ! -s "$tmp/qmp" ] || sed 's/^/# /' "$tmp/qmp"
# isa-debug-exit: the status S PID 1 reports leaves QEMU as (S << 1) | 1.
[ $((rc & 1)) = 1 ] && [ "$rc" -lt 512 ] && rc=$((rc >> 1))
grep -q "^GUEST_DONE" "$tmp/out" && ok "QEMU booted the guest on ringvm's back-ends and ran the checks" ||
	notok "the guest did not finish $(show)"

# --- blk.sh's checks -------------------------------------------------------------------------------
grep -q "^DISKS /dev/vd. /dev/vd.$" "$tmp/out" && ok "both disks found by their serials (GET_ID)" ||
	notok "disks: $(grep DISKS "$tmp/out")"
guest_sha=$(awk '/\/disk\/big/ {print $1}' "$tmp/out")
grep -q "^EXT4_DONE" "$tmp/out" && [ -n "$guest_sha" ] && ok "guest: mkfs.ext4, mount, write 202 files, sync, umount" ||
	notok "guest ext4 write $(show)"
e2fsck -fn "$ext4" >"$tmp/fsck" 2>&1 && ok "host: e2fsck -fn finds the file system clean" ||
	notok "host e2fsck: $(tail -n 5 "$tmp/fsck" | tr '\n' ' ')"
[ "$(debugfs -R 'cat /hello' "$ext4" 2>/dev/null)" = "hello from the guest" ] &&
	[ "$(debugfs -R 'cat /dir/sub/f199' "$ext4" 2>/dev/null)" = "file 199" ] &&
	ok "host: debugfs reads /hello and /dir/sub/f199 back" || notok "debugfs cat"
[ -n "$guest_sha" ] && [ "$(debugfs -R 'cat /big' "$ext4" 2>/dev/null | sha)" = "$guest_sha" ] &&
	ok "host: /big has the sha256 the guest computed" || notok "big file checksum"
grep -q "^FIO_STATUS 0" "$tmp/out" && grep -q "^FIO_err=0$" "$tmp/out" &&
	ok "fio --verify=crc32c numjobs=2 iodepth=16: zero errors" || notok "fio verify $(grep FIO "$tmp/out")"

# --- fs.sh's checks --------------------------------------------------------------------------------
grep -q posix-done "$tmp/out" && ok "POSIX script ran in the guest" || notok "POSIX script $(show)"
posix_checks
files=$(find "$tmp/ref" -type f | wc -l)
[ "$(sed -n 's/^UNTAR //p' "$tmp/out")" = "$files" ] && diff -r --no-dereference "$tmp/ref/linux" "$S/untar/linux" >/dev/null &&
	ok "untar of $files files: identical on the host, file by file" || notok "untar $(show)"

# --- the back-ends ---------------------------------------------------------------------------------
for p in "${servers[@]}"; do kill -TERM "$p"; done
st=0 hung=
for p in "${servers[@]}"; do
	for _ in $(seq 1 300); do running "$p" || break; sleep 0.1; done
	running "$p" && { hung+=" $p"; kill -KILL "$p"; }
	wait "$p" || st=$?
done
servers=()
[ "$st" = 0 ] && ok "every ringvm serve was alive after QEMU left and ended with 0 on SIGTERM" ||
	notok "a server ended with status $st${hung:+ (still running 30 s after SIGTERM, killed:$hung)}: $(cat "$tmp"/*.err)"
[ ! -s "$tmp/root.err" ] && [ ! -s "$tmp/share.err" ] && [ ! -s "$tmp/ext4.err" ] && [ ! -s "$tmp/fio.err" ] &&
	ok "no back-end refused a message or logged an error" || notok "back-end messages: $(cat "$tmp"/*.err | head -c 600)"
it_done
