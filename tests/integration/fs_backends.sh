#!/bin/bash
# fs_backends.sh: virtio-fs shares and virtio-blk images on many host file systems (issue 9): a fresh
# tmpfs, ext4 on a loop image, the lab's 9p (L1's /tmp is the host's /tmp over 9p, msize 512000: short
# reads), FUSE (bindfs), an overlayfs (lower on 9p, upper on ext4) and NFSv3 over loopback. Every guest
# result is compared byte for byte with the host; the tables and the verdicts are in fs_backends.py.
# Boots: one VM for the shares (--root / for python3 and coreutils), one for the disks with direct=off,
# one with direct=on (8 virtio devices at most per VM).
# Needs root and a KVM that runs Linux: the KVM lab here. 9p and NFS need the lab (its /tmp is 9p; an
# NFS server is started only inside L1, never on a real host): elsewhere they are skipped, with why.
# Env: RINGVM; SAN_PASS=1 runs the short list (tmpfs and 9p shares, 9p and ext4 disks). TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init fs_backends
py=$(dirname "$0")/fs_backends.py
VM_TIMEOUT=${VM_TIMEOUT:-1200} # each boot needs ~1 minute in the lab; a hang must still end

in_lab=
grep -q 'ringvm_lab\.dir=' /proc/cmdline && in_lab=1

# --- the host file systems ------------------------------------------------------------------------
# dir[NAME]: where NAME's share and images live; why_not[NAME]: why NAME cannot run here. Each mount
# is undone at exit, newest first.
declare -A dir why_not
names=(tmpfs ext4 fuse overlay nfs 9p) # (9p last: before issue 9's fix, its reads ended guests early)
[ -n "${SAN_PASS:-}" ] && names=(tmpfs ext4 9p)
M=$tmp/m
mkdir -p "$M"/{tmpfs,ext4,fuse,overlay,nfs}
undo=()
fsb_teardown() {
	local i
	for ((i = ${#undo[@]} - 1; i >= 0; i--)); do eval "${undo[i]}" >/dev/null 2>&1; done
}
it_on_exit fsb_teardown
need() { why_not[$1]=$2; echo "# $1: $2"; }
wanted() { [[ " ${names[*]} " == *" $1 "* ]]; } # (the sanitizer pass wants fewer)

# Modules load on demand in the lab (tests/lab/modprobe); /dev/fuse appears only once fuse is loaded.
modprobe -a loop ext4 fuse overlay 2>/dev/null

if mount -t tmpfs -o size=1G,mode=755 fsb-tmpfs "$M/tmpfs"; then
	undo+=("umount -l '$M/tmpfs'")
	dir[tmpfs]=$M/tmpfs/share
else
	need tmpfs "cannot mount a tmpfs"
fi

if [ -n "${dir[tmpfs]:-}" ] && truncate -s 256M "$M/tmpfs/ext4.img" && mkfs.ext4 -q -F "$M/tmpfs/ext4.img" &&
	mount -o loop "$M/tmpfs/ext4.img" "$M/ext4"; then
	undo+=("umount -l '$M/ext4'")
	dir[ext4]=$M/ext4/share
else
	need ext4 "cannot mount an ext4 loop image (loop/ext4 modules?)"
fi

p9=
if [ "$(findmnt -n -o FSTYPE --target /tmp)" = 9p ] && p9=$(mktemp -d /tmp/ringvm-fs_backends.XXXXXX); then
	undo+=("rm -rf '$p9'")
	dir[9p]=$p9/share
else
	need 9p "/tmp is not 9p here (only the KVM lab's is)"
fi

# FUSE: bindfs (libfuse 3), an implementation independent of ringvm's own FUSE server, over ext4 so
# that O_DIRECT can reach a file system that has it.
if ! wanted fuse; then
	:
elif [ -n "${dir[ext4]:-}" ] && mkdir "$M/ext4/fuse-src" && bindfs "$M/ext4/fuse-src" "$M/fuse"; then
	undo+=("umount -l '$M/fuse'")
	dir[fuse]=$M/fuse/share
else
	need fuse "cannot mount bindfs (fuse module, bindfs package?)"
fi

# overlayfs: the lower layer on 9p (short reads underneath), the upper one on ext4. The lower layer's
# files are made before the mount (make_data below), as an image would be.
ovl_lower=
if ! wanted overlay; then
	:
elif [ -n "${dir[ext4]:-}" ]; then
	ovl_lower=${p9:-$M/tmpfs}/ovl-lower
	mkdir -p "$ovl_lower/share" "$M/ext4/ovl-upper" "$M/ext4/ovl-work"
	dir[overlay]=$M/overlay/share
else
	need overlay "no ext4 for its upper layer"
fi

# NFSv3 over loopback (v4 refused the export of a tmpfs under L1's overlay root: "No such file or
# directory" from the server's pseudo root). The export is a tmpfs folder (fsid= gives it an identity).
nfs_up() {
	local exp=$M/tmpfs/nfs-export
	mkdir -p "$exp" /var/lib/nfs /run/rpcbind || return 1
	ip link set lo up && modprobe nfsd || return 1
	mountpoint -q /proc/fs/nfsd || { mount -t nfsd nfsd /proc/fs/nfsd && undo+=("umount /proc/fs/nfsd"); } || return 1
	rpcbind -f >>"$tmp/nfs.log" 2>&1 &
	undo+=("kill $!")
	rpc.mountd -F >>"$tmp/nfs.log" 2>&1 &
	undo+=("kill $!")
	exportfs -i -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=4242 "127.0.0.1:$exp" || return 1
	undo+=("exportfs -ua")
	rpc.nfsd 4 || return 1
	undo+=("rpc.nfsd 0")
	local i
	for i in $(seq 100); do rpcinfo -t 127.0.0.1 mountd 3 >/dev/null 2>&1 && break; sleep 0.1; done
	mount -t nfs -o vers=3,nolock,tcp "127.0.0.1:$exp" "$M/nfs" || return 1
	undo+=("umount -l '$M/nfs'")
}
if ! wanted nfs; then
	:
elif [ -n "$in_lab" ] && [ -n "${dir[tmpfs]:-}" ] && nfs_up; then
	dir[nfs]=$M/nfs/share
else
	need nfs "no NFS server: ${in_lab:+it failed to start (rpcbind, rpc.mountd, rpc.nfsd from nfs-kernel-server)}${in_lab:-it is only started inside the KVM lab}"
fi

# --- the data: files to read, images ---------------------------------------------------------------
python3 "$py" make-image "$tmp/disk.img"
make_data() { # make_data DIR: the share's files and two images
	python3 "$py" make-files "$1" && mkdir -p "$1/img" && cp "$tmp/disk.img" "$1/img/off.img" &&
		cp "$tmp/disk.img" "$1/img/on.img"
}
for f in "${names[@]}"; do
	[ -n "${dir[$f]:-}" ] || continue
	if [ "$f" = overlay ]; then
		make_data "$ovl_lower/share" &&
			mount -t overlay -o "lowerdir=$ovl_lower,upperdir=$M/ext4/ovl-upper,workdir=$M/ext4/ovl-work" \
				fsb-overlay "$M/overlay" && undo+=("umount -l '$M/overlay'") || {
			unset 'dir[overlay]'
			need overlay "cannot mount the overlay"
		}
	else
		make_data "${dir[$f]}" || { unset "dir[$f]"; need "$f" "cannot write the data"; }
	fi
done
# The guest's program for the shares, where the guest's --root / reaches it on a plain file system.
cp "$py" "$tmp/fs_backends.py"

# Every file system the issue names is exercised or reported as skipped, with the reason.
for f in "${names[@]}"; do
	if [ -n "${dir[$f]:-}" ]; then ok "$f: mounted, data in place ($(findmnt -n -o FSTYPE --target "${dir[$f]}"))"; else
		skip "$f" "${why_not[$f]}"; fi
done

# --- shares: one VM, every file system at /fsb/NAME ----------------------------------------------
share_args=() guest_args=() host_args=() appenders=()
for f in "${names[@]}"; do
	[ -n "${dir[$f]:-}" ] || continue
	share_args+=(--share "${dir[$f]}:/fsb/$f")
	guest_args+=("$f=/fsb/$f")
	host_args+=("$f=${dir[$f]}")
	python3 "$py" append "${dir[$f]}/grow" &
	appenders+=($!)
done
t0=$SECONDS
vm --memory 1G --root / "${share_args[@]}" -- /usr/bin/python3 "$tmp/fs_backends.py" guest-shares "${guest_args[@]}"
echo "# shares VM: $((SECONDS - t0)) s, status $rc; the guest's seconds per share (checks+growing file):" \
	$(awk '$2 == "seconds" {print $1 "=" $3}' "$tmp/out")
for p in "${appenders[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done # done by now, or stuck
[ "$rc" = 0 ] && grep -q '^shares-done' "$tmp/out" && ok "shares: the guest ran every check" ||
	notok "shares: the guest's run $(show)"
python3 "$py" verify-shares "$tmp/out" "${host_args[@]}" >"$tmp/verdicts"
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	*) notok "${line#not ok - }" ;;
	esac
done <"$tmp/verdicts"

# --- disks: the same image on every file system, direct=off, then direct=on where O_DIRECT works ---
mkdir "$tmp/g"
python3 "$py" disk-script >"$tmp/g/disk.sh"
disks() { # disks MODE NAME...: one VM, NAME's img/MODE.img as vda, vdb... in order
	local mode=$1 f disk_args=() host=()
	shift
	for f in "$@"; do
		disk_args+=(--disk "${dir[$f]}/img/$mode.img,direct=$mode")
		host+=("$f=${dir[$f]}/img/$mode.img")
	done
	t0=$SECONDS
	vm --share "$tmp/g:/g,readonly" "${disk_args[@]}" -- sh /g/disk.sh
	echo "# disks VM, direct=$mode: $((SECONDS - t0)) s, status $rc"
	[ "$rc" = 0 ] && grep -q '^disks-done' "$tmp/out" && ok "disks, direct=$mode: the guest ran every check" ||
		notok "disks, direct=$mode: the guest's run $(show)"
	python3 "$py" verify-disks "$tmp/out" "direct=$mode" "${host[@]}" >"$tmp/verdicts"
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		*) notok "${line#not ok - }" ;;
		esac
	done <"$tmp/verdicts"
}
off=() on=()
for f in "${names[@]}"; do
	[ -n "${dir[$f]:-}" ] || continue
	off+=("$f")
	# O_DIRECT is the file system's to refuse (tmpfs on Linux 6.1 does): there, direct=on must be
	# refused before boot, in one line that says why and what to use instead.
	if dd if=/dev/zero of="${dir[$f]}/img/probe" bs=4096 count=1 oflag=direct 2>/dev/null; then
		on+=("$f")
	else
		truncate -s 1M "${dir[$f]}/img/probe"
		vm --disk "${dir[$f]}/img/probe,direct=on" -- true
		[ "$rc" != 0 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "does not support O_DIRECT" "$tmp/err" &&
			ok "$f disk, direct=on: the file system refuses O_DIRECT, ringvm refuses the disk in one line" ||
			notok "$f disk, direct=on where O_DIRECT is refused $(show)"
	fi
	rm -f "${dir[$f]}/img/probe"
done
[ -n "${SAN_PASS:-}" ] && off=() # the sanitizer pass: one disk VM is enough
[ ${#off[@]} = 0 ] || disks off "${off[@]}"
[ ${#on[@]} = 0 ] || disks on "${on[@]}"

it_done
