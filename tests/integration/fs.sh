#!/bin/bash
# fs.sh: virtio-fs through `ringvm run --share/--root` (issue 5): POSIX behaviour seen from the guest
# and checked from the host, escape attempts, an untar compared file by file, --root /.
# Needs a KVM that runs Linux (the lab here). Env: RINGVM; SAN_PASS=1 runs the short list. TAP.
# fs.sh --host-fuse: no VM; the POSIX and conformance parts against the same server mounted on the
# host through /dev/fuse (build/tests/fuse_host_mount, root only).
set -u
. "$(dirname "$0")/lib.sh"
it_init fs
VM_TIMEOUT=${VM_TIMEOUT:-600}

# The xattr checks use user.* (the only namespace a share passes by default, and the one ringvm
# can set without CAP_SYS_ADMIN, which it drops). They need a host file system that has them: not
# tmpfs before Linux 6.6 (the lab's TMPDIR is an overlay on one); the lab's /tmp (the host's, over
# 9p) has them, so the xattr file lives in a second share there when TMPDIR has none ($XH; the guest
# sees it at /x, or in the main share when TMPDIR will do).
xns=user
S=$tmp/share      # the shared directory
mkdir -p "$S"
xattr_ok() { python3 -c "import os,sys; os.setxattr(sys.argv[1], 'user.probe', b'1')" "$1" 2>/dev/null; }
if xattr_ok "$S"; then
	XH=$S/c XG=c XSHARE=()
else
	XH=$(mktemp -d /tmp/ringvm-fsx.XXXXXX) || exit 1
	chmod 777 "$XH"
	it_on_exit 'rm -rf "$XH"'
	XG=x XSHARE=(--share "$XH:/x")
fi
O=$tmp/outside    # next to it: nothing the guest does may change or reveal what is in here
mkdir -p "$S" "$O"
secret=secret-$RANDOM-$RANDOM
echo "$secret" >"$O/SECRET"
chmod 755 "$S" "$O"

# --- POSIX operations from busybox, each checked on the host (fs_posix.inc) ------------------------
. "$(dirname "$0")/fs_posix.inc"
fs_posix_script "$S/posix.sh"
# --- what busybox cannot do: xattrs, mmap, SEEK_DATA/HOLE, RENAME_EXCHANGE, fsync (python3 via --root /)
cat >"$S/conf.py" <<'EOF'
import ctypes, mmap, os, sys
d = sys.argv[1]
ns = sys.argv[2] if len(sys.argv) > 2 else "user"  # xattr namespace the host file system supports
os.chdir(d)
def t(name, cond):
    print(("ok - " if cond else "not ok - ") + name, flush=True)
xa = os.path.join(sys.argv[3] if len(sys.argv) > 3 else d, "xa")  # where user.* xattrs work
fd = os.open("x", os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"0123456789"); os.fsync(fd)
open(xa, "w").close()
os.setxattr(xa, ns + ".color", b"blue")
t("setxattr/getxattr", os.getxattr(xa, ns + ".color") == b"blue")
t("listxattr", ns + ".color" in os.listxattr(xa))
os.setxattr(xa, ns + ".gone", b"1"); os.removexattr(xa, ns + ".gone")
t("removexattr", ns + ".gone" not in os.listxattr(xa))
try:
    os.setxattr(xa, "trusted.evil", b"1"); t("trusted.* refused by the default policy", False)
except OSError:
    t("trusted.* refused by the default policy", True)
m = mmap.mmap(fd, 10); m[0:3] = b"MAP"; m.flush(); m.close()
t("mmap write then read()", os.pread(fd, 3, 0) == b"MAP")
m = mmap.mmap(fd, 10, prot=mmap.PROT_READ); ok = m[3:6] == b"345"; m.close()
t("mmap read", ok)
os.close(fd)
fd = os.open("holes", os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b"d", 1 << 20); os.pwrite(fd, b"e", 8 << 20); os.fsync(fd)
t("SEEK_DATA skips the leading hole", os.lseek(fd, 0, os.SEEK_DATA) >= (1 << 20) - 4096)
t("SEEK_HOLE finds the hole after the data", os.lseek(fd, 1 << 20, os.SEEK_HOLE) < (8 << 20))
os.close(fd)
open("ea", "w").write("A"); open("eb", "w").write("B")
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, b"ea", -100, b"eb", 2)   # RENAME_EXCHANGE
t("RENAME_EXCHANGE", r == 0 and open("ea").read() == "B" and open("eb").read() == "A")
r = libc.renameat2(-100, b"ea", -100, b"eb", 1)   # RENAME_NOREPLACE
t("RENAME_NOREPLACE onto an existing name fails", r != 0 and ctypes.get_errno() == 17)
os.mkdir("pub"); os.chmod("pub", 0o1777)
open("rootonly", "w").write("r")
pid = os.fork()
if pid == 0:   # as another user: files it makes are its own on the host; root's are not writable
    os.setgroups([]); os.setgid(1000); os.setuid(1000)
    open("pub/u", "w").write("mine")
    try:
        open("rootonly", "a").write("x"); os._exit(1)
    except PermissionError:
        os._exit(0)
_, st = os.waitpid(pid, 0)
t("uid 1000 creates its own file and cannot write root's", st == 0 and os.stat("pub/u").st_uid == 1000)
os.mkdir("many")
for i in range(3000):
    open("many/f%05d" % i, "w").close()
t("3,000 entries listed back", len(os.listdir("many")) == 3000)
with open("big", "wb") as f:
    chunk = bytes(range(256)) * 4096
    for i in range(128):
        f.write(chunk)
    f.flush(); os.fsync(f.fileno())
t("128 MiB file written", os.stat("big").st_size == 128 << 20)
print("conf-done", flush=True)
EOF
conf_checks() { # read conf.py's TAP from $tmp/out, then check its work from the host
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "guest: ${line#ok - }" ;;
		"not ok - "*) notok "guest: ${line#not ok - }" ;;
		esac
	done <"$tmp/out"
	local C=$S/c
	check "host: xattr $xns.color=blue" sh -c "python3 -c 'import os,sys; sys.exit(os.getxattr(\"$XH/xa\",\"$xns.color\")!=b\"blue\")'"
	check "host: mmap-written bytes" test "$(head -c 10 "$C/x")" = MAP3456789
	check "host: exchanged contents" sh -c "[ \"\$(cat '$C/ea')\" = B ] && [ \"\$(cat '$C/eb')\" = A ]"
	check "host: the file made by guest uid 1000 is owned by 1000:1000" test "$(stat -c %u.%g "$C/pub/u")" = 1000.1000
	check "host: root's file unchanged" test "$(cat "$C/rootonly")" = r
	check "host: 3,000 entries" test "$(ls "$C/many" | wc -l)" = 3000
	check "host: 128 MiB file, same bytes" sh -c "[ \"\$(stat -c %s '$C/big')\" = 134217728 ] &&
		[ \"\$(python3 -c 'import sys; print(open(\"$C/big\",\"rb\").read()==bytes(range(256))*4096*128)')\" = True ]"
	rm -rf "$C/many" "$C/big"
}

# --- without a VM: the same server on the host's /dev/fuse (build/tests/fuse_host_mount) ------------
if [ "${1:-}" = --host-fuse ]; then
	mnt=$tmp/mnt
	mkdir "$mnt" "$S/p" "$S/c"
	${FUSE_HOST_MOUNT:-build/tests/fuse_host_mount} "$S" "$mnt" 4 2>"$tmp/fuse.err" &
	fuse_pid=$!
	it_on_exit 'umount "$mnt" 2>/dev/null'
	# Wait for the mount itself, not for a guessed time; a server that ends first is a failure.
	deadline=$((SECONDS + 300))
	until mountpoint -q "$mnt"; do
		if ! kill -0 "$fuse_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
			notok "host FUSE: $mnt was never mounted ($(tail -c 300 "$tmp/fuse.err"))"
			it_done
		fi
		sleep 0.1
	done
	rc=0
	sh "$S/posix.sh" "$mnt" >"$tmp/out" 2>"$tmp/err" || rc=$?
	grep -q posix-done "$tmp/out" && ok "host FUSE: POSIX script ran" || notok "host FUSE: POSIX script $(show)"
	posix_checks
	if [ "$XG" = c ]; then xg=$mnt/c; else xg=$XH; fi
	python3 "$S/conf.py" "$mnt/c" "$xns" "$xg" >"$tmp/out" 2>"$tmp/err" || rc=$?
	grep -q conf-done "$tmp/out" && ok "host FUSE: python conformance script ran" || notok "host FUSE: conformance $(show)"
	conf_checks
	mkdir "$tmp/ref" "$mnt/untar"
	tar -C /usr -cf "$tmp/src.tar" include 2>/dev/null
	tar -C "$tmp/ref" -xf "$tmp/src.tar"
	tar -C "$mnt/untar" -xf "$tmp/src.tar" && diff -r --no-dereference "$tmp/ref" "$S/untar" >/dev/null &&
		ok "host FUSE: untar of $(find "$tmp/ref" -type f | wc -l) files identical on the host" || notok "host FUSE: untar"
	umount "$mnt"
	wait
	it_done
fi

# --- the CLI refuses bad shares before booting -------------------------------------------------
vm --share "$tmp/missing:/mnt" -- true
[ "$rc" != 0 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q missing "$tmp/err" &&
	ok "a missing share directory: one-line error, non-zero status" || notok "missing dir $(show)"
vm --share "$S:/mnt,cache=sometimes" -- true
[ "$rc" != 0 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
	ok "a bad --share option: one-line error" || notok "bad option $(show)"

# --- basic round trip ---------------------------------------------------------------------------
vm --share "$S:/mnt" -- sh -c 'echo hello >/mnt/a && cat /mnt/a && mkdir /mnt/d && echo x >/mnt/d/f'
[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = hello ] && [ "$(cat "$S/a")" = hello ] && [ -f "$S/d/f" ] &&
	ok "create, write and read back a file; the host sees it" || notok "round trip $(show)"

echo "from host" >"$S/hostfile"
# The shell's complaints (EROFS) are on the command's stderr.
vm --share "$S:/mnt,readonly" -- sh -c 'cat /mnt/hostfile; echo x >/mnt/new; echo x >>/mnt/hostfile;
	rm -f /mnt/hostfile; mkdir /mnt/nd; touch /mnt/hostfile; echo done'
grep -q "from host" "$tmp/out" && [ ! -e "$S/new" ] && [ ! -e "$S/nd" ] &&
	[ "$(cat "$S/hostfile")" = "from host" ] && grep -qi "read-only" "$tmp/err" &&
	ok "readonly share: reads work, every change fails with EROFS" || notok "readonly $(show)"

mkdir "$S/p"
vm --share "$S:/mnt" -- sh /mnt/posix.sh
[ "$rc" = 0 ] && grep -q posix-done "$tmp/out" && ok "POSIX script ran in the guest" || notok "POSIX script $(show)"
posix_checks

mkdir "$S/c"
if [ -z "${SAN_PASS:-}" ]; then
	if [ "$XG" = c ]; then xg=/mnt/c; else xg=/x; fi
	VM_TIMEOUT=1500 vm --memory 1G --root / --share "$S:/mnt" "${XSHARE[@]}" -- /usr/bin/python3 /mnt/conf.py /mnt/c "$xns" "$xg"
	grep -q conf-done "$tmp/out" && ok "python conformance script ran (--root / + --share)" ||
		notok "conformance script $(show)"
	conf_checks
fi

# --- capabilities of every ringvm thread while a guest uses the share (queue workers, io-wq) -------
# A writable share keeps CHOWN, DAC_OVERRIDE, FOWNER, FSETID, SETGID, SETUID, SETFCAP: 0x800000db.
VM_TIMEOUT=300 vm_bg --share "$S:/mnt" -- sh -c 'dd if=/dev/zero of=/mnt/capfile bs=64k count=64 2>/dev/null; cat /mnt/capfile >/dev/null; ls -R /mnt >/dev/null; echo CAPS-READY; sleep 60'
if wait_output CAPS-READY; then
	p=$(vmm_pid) wrong="" workers=0 tasks=0
	for st in /proc/"$p"/task/*/status; do
		[ -r "$st" ] || continue
		tasks=$((tasks + 1))
		name=$(awk '/^Name:/ { print $2 }' "$st")
		case $name in vq*) workers=$((workers + 1)) ;; esac
		eff=$(awk '/^CapEff:/ { print $2 }' "$st") bnd=$(awk '/^CapBnd:/ { print $2 }' "$st")
		nnp=$(awk '/^NoNewPrivs:/ { print $2 }' "$st")
		[ "$eff" = 00000000800000db ] && [ "$bnd" = 00000000800000db ] && [ "$nnp" = 1 ] ||
			wrong="$wrong $name:$eff/$bnd/$nnp"
	done
	[ "$workers" -ge 2 ] && [ -z "$wrong" ] &&
		ok "all $tasks ringvm threads ($workers queue workers) hold only the share's capabilities, no_new_privs" ||
		notok "capabilities: $tasks threads, $workers workers, wrong:$wrong"
	# The state report (SIGUSR2, vmm/state_report.h) of this live guest: every started queue and the
	# vCPU answer, and ringvm goes on running.
	# (run-all sends reports to the job's log, RINGVM_STATE_LOG: only what this signal added counts)
	log=${RINGVM_STATE_LOG:-$tmp/err}
	from=$(($(stat -c %s "$log" 2>/dev/null || echo 0) + 1))
	kill -USR2 "$p"
	for _ in $(seq 1 300); do tail -c +"$from" "$log" | grep -q "^ringvm-state: #1 end " && break; sleep 0.1; done
	rep=$(tail -c +"$from" "$log" | grep "^ringvm-state: #1 ")
	end=$(echo "$rep" | grep " end ")
	live=$(echo "$rep" | grep -c " vq .* size=")
	if [[ $end =~ queues=([0-9]+)/([0-9]+)\ vcpus=1/1 ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
		[ "${BASH_REMATCH[1]}" = "$live" ] && echo "$rep" | grep -q "virtio-fs.* requestq0 size=.* irqs=[1-9].* owed=0 " &&
		echo "$rep" | grep -q " vcpu 0 lapic id=0 .* timer_mode=" && kill -0 "$p"; then
		ok "SIGUSR2: a state report of the share's $live started queues and the vCPU; ringvm runs on"
	else
		notok "SIGUSR2 state report: $end; $(echo "$rep" | head -c 800)"
	fi
	# A KVM that kept a TSC rate the CPU cannot scale to computes the guest's TSC as 0 and fires its
	# TSC-deadline timers minutes late (tests/lab/README.md): the lab's guests then stall.
	echo "$rep" | grep -q " vcpu 0 mp_state=.* tsc=[1-9]" &&
		ok "the state report's vCPU TSC, as KVM computes it, is not 0" ||
		notok "KVM computes the vCPU's TSC as 0: its TSC-deadline timer fires late; $(echo "$rep" | grep ' vcpu 0 mp_state')"
else
	notok "capabilities: the guest did not get ready $(show)"
fi
vm_kill TERM
[ "$rc" = 143 ] && ok "SIGTERM ends ringvm while the guest uses the share (status 143)" ||
	notok "SIGTERM with a share: status $rc $(show)"

# --- rm -rf of a big directory: READDIR must continue its stream, not re-seek by entry count --------
mkdir "$S/big"
i=0
while [ $i -lt 600 ]; do : >"$S/big/file-with-a-longish-name-$i"; i=$((i + 1)); done
vm --share "$S:/mnt" -- sh -c 'ls /mnt/big | wc -l; rm -rf /mnt/big; echo rm=$?'
[ "$rc" = 0 ] && [ "$(head -n1 "$tmp/out")" = 600 ] && grep -q "^rm=0" "$tmp/out" && [ ! -e "$S/big" ] &&
	ok "rm -rf of a 600-entry directory removes every entry (readdir across unlinks)" || notok "rm -rf big dir $(show)"

# --- escape attempts: nothing outside the share is read, written or revealed --------------------
ln -s "$O/SECRET" "$S/planted"          # a host symlink pointing outside (absolute host path)
ln -s "$O" "$S/planted-dir"
ln -s /proc/self/root "$S/magic"        # a /proc magic link
mkdir "$S/race"
cat >"$S/escape.sh" <<EOF
cd /mnt
cat planted planted-dir/SECRET magic$O/SECRET ../../..$O/SECRET 2>/dev/null
ls -la magic/ 2>/dev/null | grep -c SECRET
ln -s $O/SECRET guestlink; cat guestlink 2>/dev/null
ln -s $O guestdir; echo pwned >guestdir/PWNED 2>/dev/null
echo pwned >planted-dir/PWNED2 2>/dev/null
# a rename race between a directory and a symlink to the outside, with writers inside
( i=0; while [ \$i -lt 300 ]; do mv race race.d; ln -s $O race; rm race; mv race.d race; i=\$((i+1)); done ) &
( i=0; while [ \$i -lt 300 ]; do echo x >race/f\$i 2>/dev/null; i=\$((i+1)); done ) &
wait
echo escape-done
EOF
# (-T everywhere: the host's own mv and ln must never follow the symlink into the outside either)
( for _ in $(seq 300); do mv -T "$S/race" "$S/race.h" 2>/dev/null && ln -sT "$O" "$S/race" 2>/dev/null;
	rm -f "$S/race" 2>/dev/null; mv -T "$S/race.h" "$S/race" 2>/dev/null; sleep 0.01; done ) &
racer=$!
vm --share "$S:/mnt" -- sh /mnt/escape.sh
wait $racer
grep -q escape-done "$tmp/out" && ok "escape script ran" || notok "escape script $(show)"
! grep -q "$secret" "$tmp/out" && ok "no escape revealed the outside secret (.., planted and guest symlinks, /proc magic link)" ||
	notok "escape: secret leaked $(show)"
[ "$(ls "$O")" = SECRET ] && [ "$(cat "$O/SECRET")" = "$secret" ] &&
	ok "nothing was created or changed outside the share (rename race included)" ||
	notok "escape: outside changed: $(ls -la "$O")"
[ -L "$S/guestlink" ] && ok "a guest-made symlink is stored as a symlink on the host" || notok "guest symlink missing"

# --- untar a source tree and compare it file by file ------------------------------------------
# The kernel's UAPI headers (linux-libc-dev: ~760 files, ~6.5 MB): a tree of a known size, not the
# whole /usr/include, whose size is whatever -dev packages the host happens to carry (132 MB here).
src=/usr/include/linux
tar -C "$(dirname "$src")" -cf "$tmp/src.tar" "$(basename "$src")" 2>/dev/null
cp "$tmp/src.tar" "$S/src.tar"
mkdir "$S/untar" "$tmp/ref"
tar -C "$tmp/ref" -xf "$tmp/src.tar"
vm --share "$S:/mnt" -- sh -c 'tar -C /mnt/untar -xf /mnt/src.tar && sync && find /mnt/untar -type f | wc -l'
files=$(find "$tmp/ref" -type f | wc -l)
[ "$rc" = 0 ] && [ "$(tail -n1 "$tmp/out")" = "$files" ] && diff -r --no-dereference "$tmp/ref" "$S/untar" >/dev/null &&
	ok "untar of $files files: identical on the host, file by file" || notok "untar $(show)"

# --- several request queues; the cache modes --------------------------------------------------
head -c $((8 << 20)) /dev/urandom >"$S/part.bin" # 8 MiB: enough to cross many requests, cheap in the lab
for opt in queues=4 cache=never cache=always; do
	vm --share "$S:/mnt,$opt" -- sh -c 'for w in 1 2 3 4; do (dd if=/mnt/part.bin of=/mnt/copy$w bs=64k 2>/dev/null) & done; wait;
		sync; md5sum /mnt/copy1 /mnt/copy4 /mnt/part.bin | cut -d" " -f1 | uniq | wc -l'
	[ "$rc" = 0 ] && [ "$(tail -n1 "$tmp/out")" = 1 ] && cmp -s "$S/copy3" "$S/part.bin" &&
		ok "$opt: four parallel copies are identical in the guest and on the host" || notok "$opt $(show)"
	rm -f "$S"/copy*
done

# --- the host's / as the guest's root -------------------------------------------------------
vm --root / -- /usr/bin/python3 -c 'print(6*7)'
[ "$rc" = 0 ] && [ "$(tail -n1 "$tmp/out")" = 42 ] && ok "--root / boots the host's userland and runs python3" ||
	notok "--root / $(show)"
vm --root / -- sh -c 'echo scratch >/etc/ringvm-overlay-test && cat /etc/ringvm-overlay-test'
[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = scratch ] && [ ! -e /etc/ringvm-overlay-test ] &&
	ok "--root /: writes land in the guest's tmpfs overlay, never on the host" || notok "--root overlay $(show)"

it_done
