# lib.sh: helpers the tests/boot scripts source (no TAP of their own).

# stop_bounded PID: SIGTERM to PID (a background job of the caller's shell), then up to 10 s for it
# to end, then SIGKILL so a script never hangs. Sets stop_status: its exit status, or "hung" when
# SIGKILL was needed.
stop_bounded() {
	local i=0
	kill -TERM "$1" 2>/dev/null
	while kill -0 "$1" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1"
		wait "$1"
		stop_status=hung
	else
		wait "$1"
		stop_status=$?
	fi
}
