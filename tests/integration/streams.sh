#!/bin/bash
# streams.sh: the command's stdin, stdout and stderr are ringvm's own, as pipes (issue 11): bytes,
# EOF both ways, a reader going away, a paused reader, through virtio-console; the launcher options
# (-e, -w, -u, --timeout). Six boots (two with
# SAN_PASS=1). Needs a KVM that runs Linux (the lab here). Env: RINGVM, STREAM_MB (default 10). TAP.
set -u
. "$(dirname "$0")/lib.sh"
it_init streams
T=${VM_TIMEOUT:-300}
mb=${STREAM_MB:-10}

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

if [ -z "${SAN_PASS:-}" ]; then
	# stdin a pipe, and a reader that pauses for 3 s before reading anything: flow control, no loss.
	seq 1 300000 >"$tmp/want"
	timeout "$T" bash -c 'echo hi | "$1" run -- sh -c "cat; seq 1 300000" 2>"$2/err" |
		{ sleep 3; cat; } >"$2/out"' _ "$ringvm" "$tmp"
	rc=$?
	[ "$rc" = 0 ] && [ "$(head -n1 "$tmp/out")" = hi ] && tail -n +2 "$tmp/out" | cmp -s - "$tmp/want" &&
		ok "echo hi | ringvm run -- cat... gives hi; 300,000 lines reach a reader that paused 3 s, all of them" ||
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
