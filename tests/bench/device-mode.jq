# device-mode.jq: the host's mode during one run (tests/bench/README.md, "The host's modes"), the one
# rule device.sh's gate and device-report.sh's second look share (jq -L tests/bench 'include
# "device-mode"; ...'). $g: the gate in ns. fast: the round trip before and after the run at most $g;
# slow: both above; mixed: one on each side, or a probe missing.
def host_mode($g):
	if .xcpu_rtt_ns == null or .xcpu_rtt_after_ns == null then "mixed"
	elif .xcpu_rtt_ns <= $g and .xcpu_rtt_after_ns <= $g then "fast"
	elif .xcpu_rtt_ns > $g and .xcpu_rtt_after_ns > $g then "slow"
	else "mixed" end;
