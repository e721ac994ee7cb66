#!/bin/bash
# streams.sh: the command's stdin, stdout and stderr are ringvm's own, as pipes (issue 11): bytes,
# EOF both ways, a reader going away, a paused reader, through virtio-console; the launcher options
# (-e, -w, -u, --timeout); signals sent to ringvm reach the command, --stop-timeout, and an
# embedder's ringvm_signal(). Fourteen boots (four with SAN_PASS=1). Needs a KVM that runs Linux
# (the lab here). Env: RINGVM, STREAM_MB (default 64, 10 with SAN_PASS). TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init streams
T=${VM_TIMEOUT:-300}
# 64 MiB in the optimized pass (a lab boot took 35 s with it, 9 s with 10 MiB); the sanitizer pass,
# slower per byte (10 MiB: 25 s), keeps 10.
if [ -n "${SAN_PASS:-}" ]; then mb=${STREAM_MB:-10}; else mb=${STREAM_MB:-64}; fi

# One boot: $mb MiB of random bytes through `cat` both ways (stdin a file), then lines on stdout and
# stderr interleaved by the command: byte-exact, each stream on its own fd, nothing else on them.
head -c "$((mb << 20))" /dev/urandom >"$tmp/data"
start=$SECONDS
timeout "$T" "$ringvm" run -- sh -c 'cat; echo E1 >&2; echo O2; echo E2 >&2' \
	<"$tmp/data" >"$tmp/out" 2>"$tmp/err"
rc=$?
took=$((SECONDS - start))
{ cat "$tmp/data"; echo O2; } | sha >"$tmp/want"
[ "$rc" = 0 ] && [ "$(sha <"$tmp/out")" = "$(cat "$tmp/want")" ] &&
	ok "$mb MiB through cat, stdin -> stdout, byte-exact (sha256), stdin at EOF ends cat (${took} s)" ||
	notok "$mb MiB through cat: status $rc, $(wc -c <"$tmp/out") bytes out (stderr: $(tail -c 300 "$tmp/err"))"
[ "$(cat "$tmp/err")" = "$(printf 'E1\nE2')" ] &&
	ok "stderr gets exactly the stderr lines, stdout only the stdout ones" ||
	notok "stdout/stderr separation (stderr: $(tail -c 300 "$tmp/err"))"

# The reader goes away: `yes` in the guest gets SIGPIPE (141) once head has its line; ringvm ends on
# its own (the timing line it prints at its normal end), never by a SIGPIPE of its own.
start=$SECONDS
timeout "$T" "$ringvm" run --timing -- yes 2>"$tmp/err" </dev/null | head -n1 >"$tmp/out"
st=("${PIPESTATUS[@]}")
took=$((SECONDS - start))
[ "$(cat "$tmp/out")" = y ] && [ "${st[0]}" = 141 ] && grep -q 'ringvm: timing:' "$tmp/err" &&
	ok "ringvm run -- yes | head -1: one 'y', yes dies of SIGPIPE (141), ringvm ends normally (${took} s)" ||
	notok "yes | head -1: out '$(head -c 40 "$tmp/out")', statuses ${st[*]} (stderr: $(tail -c 300 "$tmp/err"))"

# Signals (issue 11): INT, HUP and TERM sent to ringvm reach a command that traps them, one after the
# other (a line each; TERM's trap exits 7, ringvm's status). The stop timeout is long: it must not
# be what ends the run. Each signal is sent once the previous one's line arrived.
vm_bg --stop-timeout 300 -- sh -c 'trap "echo got INT" INT; trap "echo got HUP" HUP
	trap "echo got TERM; exit 7" TERM; echo ready; while :; do sleep 1; done'
sent=
for s in INT HUP TERM; do
	[ "$s" = INT ] && { wait_output ready || break; }
	kill -"$s" "$(vmm_pid)" && sent="$sent $s"
	[ "$s" = TERM ] || wait_output "got $s" || break
done
wait "$vm_pid"
rc=$?
vm_pid=
[ "$sent" = " INT HUP TERM" ] && [ "$rc" = 7 ] &&
	[ "$(cat "$tmp/out")" = "$(printf 'ready\ngot INT\ngot HUP\ngot TERM')" ] &&
	ok "SIGINT, SIGHUP, SIGTERM to ringvm reach the command's traps in turn; its exit 7 is ringvm's" ||
	notok "trapped signals (sent:$sent) $(show)"

# SIGTERM while ringvm's stdout is a FIFO whose reader took the first bytes and stopped reading:
# `yes` dies of the signal (143), its output still in flight is dropped, and ringvm is gone well
# before the default 10 s stop timeout.
mkfifo "$tmp/fifo"
timeout -k 30 "$T" "$ringvm" run -- yes >"$tmp/fifo" 2>"$tmp/err" </dev/null &
vm_pid=$!
exec 3<"$tmp/fifo"
head -c 4096 <&3 >"$tmp/out"
p=$(vmm_pid) # (pgrep is slow in the lab: not part of the time)
start=$(date +%s.%N)
kill -TERM "$p"
wait "$vm_pid"
rc=$?
vm_pid=
took=$(echo "$(date +%s.%N) - $start" | bc)
exec 3<&-
[ "$rc" = 143 ] && [ "$(head -c 4 "$tmp/out")" = "$(printf 'y\ny\n')" ] &&
	[ "$(echo "$took < 9" | bc)" = 1 ] &&
	ok "SIGTERM with an unread stdout FIFO: ringvm gone in ${took} s, status 143" ||
	notok "SIGTERM, unread FIFO: ${took} s $(show)"

if [ -z "${SAN_PASS:-}" ]; then
	# Untrapped: the command dies of the signal, ringvm's status is 128+N (SIGTERM: above).
	for s in INT HUP; do
		vm_bg -- sh -c 'echo ready; exec sleep 600'
		wait_output ready && kill -"$s" "$(vmm_pid)"
		wait "$vm_pid"
		rc=$?
		vm_pid=
		want=$((128 + $(kill -l "$s")))
		[ "$rc" = "$want" ] && [ "$(cat "$tmp/out")" = ready ] &&
			ok "SIG$s to ringvm kills a command that does not trap it: status $want" ||
			notok "untrapped SIG$s: want $want $(show)"
	done

	# With a tty (-t) the command is on the console; signals still reach it (the signal port alone).
	vm_bg -t -- sh -c 'trap "echo got TERM; exit 7" TERM; echo ready; while :; do sleep 1; done'
	wait_output ready && kill -TERM "$(vmm_pid)"
	wait "$vm_pid"
	rc=$?
	vm_pid=
	[ "$rc" = 7 ] && grep -q 'got TERM' "$tmp/out" &&
		ok "-t: SIGTERM to ringvm reaches the command on the console, its trap's exit 7 is ringvm's" ||
		notok "-t, trapped SIGTERM $(show)"

	# --stop-timeout 5: a command that ignores SIGTERM is stopped by ringvm, 128+15, no sooner
	# than 5 s after the signal (and not much later: the bound is loose, the lab is slow).
	# stopped_after SECONDS NAME: the background VM's command ignores SIGTERM; once it is ready, send
	# SIGTERM and expect the stop no sooner than SECONDS after it (and not much later), status 143.
	stopped_after() {
		local start took p
		start=$(date +%s.%N)
		wait_output ready && p=$(vmm_pid) && start=$(date +%s.%N) && kill -TERM "$p"
		wait "$vm_pid"
		rc=$?
		vm_pid=
		took=$(echo "$(date +%s.%N) - $start" | bc)
		[ "$rc" = 143 ] && [ "$(cat "$tmp/out")" = ready ] && [ "$(echo "$took >= $1 && $took < 60" | bc)" = 1 ] &&
			ok "$2: a command ignoring SIGTERM is stopped after ${took} s, status 143" ||
			notok "$2: ${took} s $(show)"
	}
	vm_bg --stop-timeout 5 -- sh -c 'trap "" TERM; echo ready; sleep 600; echo not-stopped'
	stopped_after 5 "--stop-timeout 5"

	# An embedder with handle_signals off forwards its own signals with ringvm_signal() from a
	# thread of its own (tests/support/embed_signal.c): the command's traps run, its exit is the
	# status; and one that ignores SIGTERM is stopped after the stop timeout (3 s), 128+15.
	embed=$(dirname "$ringvm")/tests/embed_signal
	guest=$(dirname "$ringvm")/guest
	embed_bg() {
		timeout -k 30 "${VM_TIMEOUT:-300}" "$embed" "$guest/kernel/vmlinuz" "$guest/initramfs.img" "$@" \
			>"$tmp/out" 2>"$tmp/err" </dev/null &
		vm_pid=$!
	}
	embed_bg 300000 sh -c 'trap "echo got INT" INT; trap "echo got TERM; exit 7" TERM; echo ready
		while :; do sleep 1; done'
	wait_output ready && kill -INT "$(vmm_pid)" && wait_output "got INT" && kill -TERM "$(vmm_pid)"
	wait "$vm_pid"
	rc=$?
	vm_pid=
	[ "$rc" = 7 ] && [ "$(cat "$tmp/out")" = "$(printf 'ready\ngot INT\ngot TERM')" ] &&
		[ "$(grep -c 'ringvm_signal([0-9]*) = 0$' "$tmp/err")" = 2 ] &&
		ok "ringvm_signal() from an embedder's thread: SIGINT, SIGTERM reach the command's traps, its exit 7 is the status" ||
		notok "ringvm_signal, trapped $(show)"
	embed_bg 3000 sh -c 'trap "" TERM; echo ready; sleep 600; echo not-stopped'
	stopped_after 3 "ringvm_signal(SIGTERM), stop timeout 3 s"

	# stdin a pipe, and a reader that pauses for 3 s before reading anything: flow control, no loss.
	# The stdin port is the command's fd 0: its EOF must stick, as a pipe's does (the second cat
	# and the read get EOF at once, or the run times out).
	seq 1 300000 >"$tmp/want"
	timeout "$T" bash -c 'echo hi | "$1" run -- sh -c "cat; cat; read x || seq 1 300000" 2>"$2/err" |
		{ sleep 3; cat; } >"$2/out"' _ "$ringvm" "$tmp"
	rc=$?
	[ "$rc" = 0 ] && [ "$(head -n1 "$tmp/out")" = hi ] && tail -n +2 "$tmp/out" | cmp -s - "$tmp/want" &&
		ok "echo hi | ringvm run -- cat... gives hi, stdin stays at EOF for a second cat and a read; 300,000 lines reach a reader that paused 3 s, all of them" ||
		notok "pipe stdin / paused reader: status $rc, $(wc -l <"$tmp/out") lines (stderr: $(tail -c 300 "$tmp/err"))"

	# The command closes its stdout and waits: the host's reader must see EOF while the command
	# still runs. The reader marks that in a share the guest watches (cache=never: no stale lookups).
	mkdir "$tmp/share"
	timeout "$T" bash -c '"$1" run --share "$2/share:/host,cache=never" -- sh -c "
		echo early; exec >&-
		i=0; while [ ! -e /host/eof-seen ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
		[ -e /host/eof-seen ] && echo saw-eof >&2" 2>"$2/err" | { cat >"$2/out"; touch "$2/share/eof-seen"; }
		exit "${PIPESTATUS[0]}"' _ "$ringvm" "$tmp"
	rc=$?
	[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = early ] && grep -q saw-eof "$tmp/err" &&
		ok "the command closes stdout: the host's reader sees EOF while the command still runs" ||
		notok "stdout EOF before the end: status $rc, out '$(head -c 40 "$tmp/out")' (stderr: $(tail -c 300 "$tmp/err"))"

	# Launcher options: environment over the default, working directory, user and group (no
	# supplementary groups), then a timeout that stops a command that would run for 10 minutes.
	vm -e FOO=bar -e TERM=dumb -w /tmp -u 1000:1001 -- sh -c 'echo "$FOO $TERM $HOME"; pwd; id -u; id -g; id -G'
	[ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "$(printf 'bar dumb /\n/tmp\n1000\n1001\n1001')" ] &&
		ok "-e FOO=bar -e TERM=dumb -w /tmp -u 1000:1001: the command's environment, directory, uid and gid" ||
		notok "launcher options $(show)"
	start=$SECONDS
	vm --timeout 20 -- sh -c 'echo started; sleep 600'
	took=$((SECONDS - start))
	[ "$rc" = 124 ] && [ "$took" -lt 60 ] && [ "$(grep -c '^ringvm:' "$tmp/err")" = 1 ] &&
		grep -q '^ringvm: timed out after 20 s' "$tmp/err" &&
		ok "--timeout 20 stops a 10-minute command: status 124, one line, ${took} s ($(cat "$tmp/out"))" ||
		notok "--timeout: ${took} s $(show)"
fi

it_done
