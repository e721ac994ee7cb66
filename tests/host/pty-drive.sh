#!/bin/bash
# pty-drive.sh: tests/pty-drive, the terminal driver of the interactive tests, on the host (TAP).
# Each case that must fail does: a peer that goes away or never answers gives status 255 and a reason,
# and never kills the caller.
set -u
drive=$(cd "$(dirname "$0")/.." && pwd)/pty-drive
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
n=0
fails=0
check() { # check STATUS NAME: ok when STATUS (of the test just run) is 0
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		fails=$((fails + 1))
		echo "not ok $n - $2 (status $rc; stderr: $err; log: $(tr -d '\r' <"$tmp/log" | tail -c 300))"
	fi
}
drive() { # drive ARGS...: pty-drive with its stderr in $err and its status in $rc
	err=$("$drive" "$@" 2>&1 >/dev/null)
	rc=$?
}

# The command throws away whatever was typed before it is ready (TCIFLUSH): typing before READY is
# lost, and `read` would then wait until the deadline. Typing after READY must get through.
late_reader='sleep 1; python3 -c "import termios; termios.tcflush(0, termios.TCIFLUSH)"; echo READY; read l; echo "got-$l"; exit 3'
drive --timeout 60 "$tmp/log" "sh -c '$late_reader'" READY "$(printf 'abc\r')"
[ "$rc" = 3 ] && [ -z "$err" ] && grep -q got-abc "$tmp/log"
check $? "input is typed only after EXPECT; the command's status comes back"

drive --timeout 60 "$tmp/log" "sh -i" '# ' "$(printf 'echo one-$((1+1)); echo m1-d""one\r')" m1-done \
	"$(printf 'echo two-$((1+2)); exit 4\r')"
[ "$rc" = 4 ] && [ -z "$err" ] && grep -q one-2 "$tmp/log" && grep -q two-3 "$tmp/log"
check $? "two steps, each typed after the previous answer"

# An EXPECT already matched does not count again: the second step waits for a new one.
drive --timeout 5 "$tmp/log" "sh -c 'echo X; sleep 100'" X "$(printf '\r')" X "$(printf '\r')"
[ "$rc" = 255 ] && [ "$err" = "pty-drive: no 'X' within 5s" ]
check $? "old output is not matched twice"

drive --timeout 60 "$tmp/log" "sh -c 'echo bye; exit 9'" never-printed "$(printf 'x\r')"
[ "$rc" = 255 ] && [ "$err" = "pty-drive: the command ended (status 9) before printing 'never-printed'" ]
check $? "the command ends before EXPECT: 255 and the reason"

drive --timeout 3 "$tmp/log" "sleep 100" never-printed "$(printf 'x\r')"
[ "$rc" = 255 ] && [ "$err" = "pty-drive: no 'never-printed' within 3s" ]
check $? "EXPECT never comes: 255 after the deadline, naming it"

drive --timeout 3 "$tmp/log" "sleep 100"
[ "$rc" = 255 ] && [ "$err" = "pty-drive: the command did not end within 3s" ]
check $? "a command that does not end: 255 after the deadline"

# The peer goes away between two steps: the old harness died of SIGPIPE writing to its FIFO here.
drive --timeout 60 "$tmp/log" "sh -c 'echo first; read l; exit 0'" first "$(printf 'go\r')" second "$(printf 'x\r')"
[ "$rc" = 255 ] && [ "$err" = "pty-drive: the command ended (status 0) before printing 'second'" ]
check $? "the peer ends between steps: 255 and the reason, the caller lives on"

drive "$tmp/log" "true" extra
[ "$rc" = 2 ] && [ -n "$err" ]
check $? "an EXPECT without its SEND is a usage error"

echo "1..$n"
[ "$fails" = 0 ]
