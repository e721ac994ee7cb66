# lib.sh: what every integration script shares. Source it after `set -u`:
#   . "$(dirname "$0")/lib.sh"; it_init NAME
# Gives: $ringvm (env RINGVM, default build/ringvm), $tmp (a fresh directory under $TMPDIR, removed
# on exit), ok/notok/check/skip for TAP lines, vm (run ringvm with stdout/stderr in $tmp/out, $tmp/err
# and the status in $rc, under an outer timeout), show (that run, for a failure message), vm_bg /
# wait_output / vm_kill (a VM in the background, looked at while it runs), it_done.
ringvm=${RINGVM:-build/ringvm}
n=0
fails=0
rc=
vm_pid=
it_cleanup_hooks=()

it_init() { # it_init NAME: the scratch directory and its removal
	tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/ringvm-$1.XXXXXX") || exit 1
	chmod 755 "$tmp"
	trap it_cleanup EXIT
}

# Run at exit before $tmp goes: e.g. kill a VM left in the background.
it_on_exit() { it_cleanup_hooks+=("$1"); }

it_cleanup() {
	local h
	for h in "${it_cleanup_hooks[@]}"; do eval "$h"; done
	[ -z "$vm_pid" ] || vm_kill
	rm -rf "$tmp"
}

ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
# skip NAME REASON: a check that cannot run here; counted as skipped, never as passed.
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { # check NAME CMD...: ok when CMD succeeds, else the last run's output
	local name=$1
	shift
	if "$@"; then ok "$name"; else notok "$name $(show)"; fi
}

# vm ARGS...: `ringvm run ARGS` with no terminal; VM_TIMEOUT seconds at most (default 300), then
# SIGTERM, and SIGKILL 30 s later should ringvm not stop (status 137: a failed stop, never a hang).
vm() {
	timeout -k 30 "${VM_TIMEOUT:-300}" "$ringvm" run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}
# vm_bg ARGS...: like vm, in the background; $vm_pid is its timeout(1) process.
vm_bg() {
	timeout -k 30 "${VM_TIMEOUT:-300}" "$ringvm" run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
	vm_pid=$!
}
# wait_output TEXT: true once the background VM printed TEXT, false if it ended first (10 min at most).
wait_output() {
	local i
	for i in $(seq 1 1200); do
		grep -q "$1" "$tmp/out" 2>/dev/null && return 0
		kill -0 "$vm_pid" 2>/dev/null || break
		sleep 0.5
	done
	grep -q "$1" "$tmp/out"
}
# vmm_pid: the background VM's ringvm process (timeout(1)'s child).
vmm_pid() { pgrep -P "$vm_pid" | head -n1; }
# vm_kill [SIGNAL]: signal ringvm itself (default KILL: no chance to flush anything), then reap;
# $rc is then timeout(1)'s status, 128+SIGNAL when the signal ended ringvm.
vm_kill() {
	local p
	p=$(vmm_pid)
	[ -z "$p" ] || kill -"${1:-KILL}" "$p" 2>/dev/null
	for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill "$vm_pid" 2>/dev/null
	{ wait "$vm_pid"; } 2>/dev/null # (braces: also bash's own "Killed" notice)
	rc=$?
	vm_pid=
}
show() { echo "(status $rc; stdout: $(tail -c 600 "$tmp/out"); stderr: $(tail -c 600 "$tmp/err"))"; }
sha() { sha256sum | cut -d' ' -f1; }

# The plan line and the script's status: 0 only when every check passed.
it_done() {
	echo "1..$n"
	[ "$fails" = 0 ]
	exit
}
