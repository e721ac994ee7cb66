#!/bin/bash
# serve.sh: `ringvm serve` as a process, natively (no VM): a vhost-user front-end (build/tests/vu_probe)
# writes and reads back through it with the seccomp filter on, reconnects, and the CLI refuses bad
# input with one line and 125. Env: RINGVM (the binary), VU_PROBE. TAP output.
set -u
ringvm=${RINGVM:-build/ringvm}
probe=${VU_PROBE:-build/tests/vu_probe}
tmp=$(mktemp -d)
server=
cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../support/tap.sh"
check() { # check DESCRIPTION CMD...
	local d=$1
	shift
	if "$@" 2>"$tmp/check.err"; then pass "$d"; else fail "$d ($(head -c 300 "$tmp/check.err"))"; fi
}

# listening PATH: a socket at PATH accepts connections (bind() makes the file before listen(); a
# connect in between is refused). /proc/net/unix flags 00010000 = listening.
listening() { awk -v p="$1" '$NF == p && $4 == "00010000" { found = 1 } END { exit !found }' /proc/net/unix; }
# start ARGS...: ringvm serve ARGS in the background; waits until its socket ($sock) listens.
start() {
	"$ringvm" serve "$@" 2>"$tmp/serve.err" &
	server=$!
	for _ in $(seq 1 100); do
		[ -S "$sock" ] && listening "$sock" && return 0
		kill -0 "$server" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# stop: SIGTERM, wait; $rc is the server's status.
stop() {
	kill -TERM "$server"
	wait "$server"
	rc=$?
	server=
}

# --- virtio-blk ------------------------------------------------------------------------------
img=$tmp/disk.img
truncate -s 8M "$img"
sock=$tmp/blk.sock
check "serve blk starts and listens" start blk --socket "$sock" --disk "$img"
check "a front-end writes 64 KiB and reads it back; the image holds it (seccomp on)" \
	"$probe" blk "$sock" "$img"
check "a second front-end after the first disconnected works too" "$probe" blk "$sock" "$img"
# As root, serve blk keeps no capability at all (a disk needs none once open), and no_new_privs.
if [ "$(id -u)" = 0 ]; then
	caps=$(awk '/^CapEff|^CapPrm|^CapBnd|^NoNewPrivs/ {print $1 $2}' "/proc/$server/status" | tr '\n' ' ')
	[ "$caps" = "CapPrm:0000000000000000 CapEff:0000000000000000 CapBnd:0000000000000000 NoNewPrivs:1 " ] &&
		pass "serve blk as root: no capability left, no_new_privs" || fail "serve blk capabilities: $caps"
fi
"$ringvm" serve blk --socket "$sock" --disk "$img" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 125 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "another server is listening" "$tmp/err" &&
	pass "a second server on a live socket: refused, one line, 125" || fail "busy socket (status $rc: $(cat "$tmp/err"))"
stop
[ "$rc" = 0 ] && [ ! -e "$sock" ] && pass "SIGTERM: exit 0, socket removed" ||
	fail "SIGTERM: status $rc, socket $(ls -l "$sock" 2>&1)"
[ ! -s "$tmp/serve.err" ] && pass "nothing on stderr for a clean session" ||
	fail "stderr: $(head -c 300 "$tmp/serve.err")"

# A stale socket (its server died) is replaced.
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$sock"
"$ringvm" serve blk --socket-path "$sock" --disk "$img" 2>"$tmp/serve.err" &
server=$!
for _ in $(seq 1 100); do "$probe" blk "$sock" "$img" 2>/dev/null && break; sleep 0.05; done
check "a stale socket file is replaced: the new server answers on it" "$probe" blk "$sock" "$img"
stop

# --fd: a socket the caller made and listens on (libvirt's way); ringvm neither binds nor removes it.
sock=$tmp/fd.sock
python3 - "$ringvm" "$sock" "$img" <<'PY' 2>"$tmp/serve.err" &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[2]); s.listen(1)
fd = s.fileno()
os.set_inheritable(fd, True)
os.execv(sys.argv[1], [sys.argv[1], "serve", "blk", "--fd", str(fd), "--disk", sys.argv[3]])
PY
server=$!
for _ in $(seq 1 100); do [ -S "$sock" ] && "$probe" blk "$sock" "$img" 2>/dev/null && break; sleep 0.05; done
check "serve blk --fd N serves on an inherited listening socket" "$probe" blk "$sock" "$img"
stop
[ "$rc" = 0 ] && [ -S "$sock" ] && pass "--fd: SIGTERM ends it with 0 and leaves the caller's socket" ||
	fail "--fd stop: status $rc"

# --- virtio-fs, with virtiofsd's spellings -------------------------------------------------------
dir=$tmp/share
mkdir "$dir"
sock=$tmp/fs.sock
check "serve fs with --socket-path, -o source=, --thread-pool-size=64" \
	start fs --socket-path="$sock" -o source="$dir",cache=auto --thread-pool-size=64
check "FUSE INIT, CREATE, WRITE, READ through it; the host file holds the bytes" \
	"$probe" fs "$sock" "$dir"
check "a second session (reconnect: a new FUSE INIT)" "$probe" fs "$sock" "$dir"
stop
[ "$rc" = 0 ] && pass "serve fs: SIGTERM ends it with 0" || fail "serve fs stop: status $rc"
[ "$(grep -c 'thread-pool-size 64 ignored' "$tmp/serve.err")" = 1 ] && [ "$(wc -l <"$tmp/serve.err")" = 1 ] &&
	pass "--thread-pool-size: accepted, one note on stderr" || fail "notes: $(cat "$tmp/serve.err")"
# The workers' busy-poll ceiling: never (0) and the largest (1000) serve like the default.
for p in 0 1000; do
	check "serve fs --poll-us $p" start fs --socket "$sock" --shared-dir "$dir" --poll-us "$p"
	check "  FUSE requests through it" "$probe" fs "$sock" "$dir"
	stop
done

# --- bad input: one line, 125, nothing started --------------------------------------------------
refuse() { # refuse DESCRIPTION PATTERN ARGS...
	local desc=$1 pattern=$2
	shift 2
	timeout 20 "$ringvm" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" = 125 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "^ringvm: .*$pattern" "$tmp/err"; then
		pass "$desc: $(cat "$tmp/err")"
	else
		fail "$desc (status $rc: $(head -c 300 "$tmp/err"))"
	fi
}
refuse "serve without a device" "which device" serve
refuse "serve of an unknown device" "unknown device 'net'" serve net --socket "$tmp/x"
refuse "serve fs without --socket" "socket PATH is required" serve fs --shared-dir "$dir"
refuse "serve fs without --shared-dir" "shared-dir DIR is required" serve fs --socket "$tmp/x"
refuse "serve fs on a missing directory" "No such file" serve fs --socket "$tmp/x" --shared-dir "$tmp/missing"
refuse "serve fs with a bad --cache" "cache sometimes" serve fs --socket "$tmp/x" --shared-dir "$dir" --cache sometimes
refuse "serve fs with --queues 17" "queues 17" serve fs --socket "$tmp/x" --shared-dir "$dir" --queues 17
refuse "serve fs with --poll-us 1001" "poll-us 1001: must be a number 0..1000" serve fs --socket "$tmp/x" --shared-dir "$dir" --poll-us 1001
refuse "serve blk with --poll-us x" "poll-us x: must be a number" serve blk --socket "$tmp/x" --disk "$img" --poll-us x
refuse "serve blk with --shared-dir" "option of serve fs" serve blk --socket "$tmp/x" --shared-dir "$dir"
refuse "serve blk with a missing image" "no such file" serve blk --socket "$tmp/x" --disk "$tmp/missing.img"
refuse "serve blk with a bad disk option" "disk.img,bogus: unknown option" serve blk --socket "$tmp/x" --disk "$img,bogus"
refuse "serve fs with an unknown option" "unknown option --bogus" serve fs --bogus
refuse "a socket path that is a regular file" "not a socket" serve blk --socket "$img" --disk "$img"
refuse "a socket path too long" "too long" serve blk --socket "$tmp/$(printf 'x%.0s' $(seq 120))" --disk "$img"
[ ! -e "$tmp/x" ] && pass "no socket left behind by refused starts" || fail "socket $tmp/x left behind"

echo "1..$n"
[ "$fails" = 0 ]
