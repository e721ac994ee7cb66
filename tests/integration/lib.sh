# lib.sh: what every integration script shares. Source it after `set -u`:
#   . "$(dirname "$0")/lib.sh"; it_init NAME
# Gives: $ringvm (env RINGVM, default build/ringvm), $tmp (a fresh directory under $TMPDIR, removed
# on exit), ok/notok/check for TAP lines, vm (run ringvm with stdout/stderr in $tmp/out, $tmp/err
# and the status in $rc, under an outer timeout), show (that run, for a failure message), it_done.
ringvm=${RINGVM:-build/ringvm}
n=0
fails=0
rc=
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
	rm -rf "$tmp"
}

ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check NAME CMD...: ok when CMD succeeds, else the last run's output
	local name=$1
	shift
	if "$@"; then ok "$name"; else notok "$name $(show)"; fi
}

# vm ARGS...: `ringvm run ARGS` with no terminal; VM_TIMEOUT seconds at most (default 300).
vm() {
	timeout "${VM_TIMEOUT:-300}" "$ringvm" run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}
show() { echo "(status $rc; stdout: $(tail -c 600 "$tmp/out"); stderr: $(tail -c 600 "$tmp/err"))"; }
sha() { sha256sum | cut -d' ' -f1; }

# The plan line and the script's status: 0 only when every check passed.
it_done() {
	echo "1..$n"
	[ "$fails" = 0 ]
	exit
}
