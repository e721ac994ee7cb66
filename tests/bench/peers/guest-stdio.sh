#!/bin/sh
# guest-stdio.sh MODE ROUND: the guest's side of tests/bench/stdio.sh, run from the share (/mnt/share).
# MODE stdio: the ports (stdout, stdin) against virtio-fs reads of the same bytes, in this one guest;
# MODE serial: the command's stdout on the serial console (ringvm run -t). Writes nothing on stdout but
# the data; its figures go to /mnt/share/out/MODE.ROUND, one "NAME BYTES T0 T1 [SHA256]" line per step
# (or "NAME failed"): with -t, stderr is the console too, mixed into the very stream being timed.
set -u
share=/mnt/share
res=$share/out/$1.$2
scratch=/dev/shm # tmpfs: the copies the ports send are in memory, so only the port is timed
now() {
	read -r up _ </proc/uptime
	echo "$up"
}
size() { wc -c <"$1"; }
# step NAME BYTES CMD...: time CMD after dropping the guest's caches (so a share read goes to the host).
# /proc/uptime ticks in 10 ms: the steps take seconds. CMD's stdout is the command's (the port, or the
# console), so sha256sum's line is kept in a file and its digest added to the result.
step() {
	name=$1 bytes=$2
	shift 2
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(now)
	if "$@"; then
		echo "$name $bytes $t0 $(now) $(cat "$scratch/sum" 2>/dev/null)" | awk '{ print $1, $2, $3, $4, $5 }' >>"$res"
	else
		echo "$name failed" >>"$res"
	fi
	rm -f "$scratch/sum"
}
sum() { sha256sum "$@" >"$scratch/sum"; }

case $1 in
stdio)
	big=$(size $share/data.bin)
	small=$(size $share/small.bin)
	step fs-read "$big" cat $share/data.bin >/dev/null
	step fs-sha256 "$big" sum $share/data.bin
	# The host's `cat FILE |` has been blocked on the pipe since boot: only what the port's receive
	# buffers and PID 1's pipe hold (well under 1 MiB) was read before t0.
	step stdin-sha256 "$big" sum
	cp $share/data.bin $share/small.bin "$scratch/" || echo "copy failed" >>"$res"
	# Ends when the last byte is in PID 1's pipe: at most the pipe and the port's queue are still in flight.
	step stdout "$big" cat "$scratch/data.bin"
	step stdout-small "$small" cat "$scratch/small.bin"
	;;
serial)
	small=$(size $share/small.bin)
	cp $share/small.bin "$scratch/" || echo "copy failed" >>"$res"
	# The console is raw for a command (PID 1): no CR/LF translation, the same bytes as the ports carry.
	step serial "$small" cat "$scratch/small.bin"
	;;
esac
