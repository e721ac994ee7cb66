#!/bin/sh
# fio-jobs.sh blk|fs TARGET [RUNTIME]: run the benchmark's fio jobs against TARGET (a device or a file),
# one "RESULT <job> <fio terse v3 line>" per job on stdout. Runs in the guest (busybox sh) and on the host.
#
# RESULT lines are all the console carries: the lab's serial port moves tens of KB/s, a JSON dump would
# take longer than the job. FIO_DIRECT (default 1) is 0 where the target cannot do O_DIRECT (tmpfs).
kind=$1
target=$2
runtime=${3:-10}
direct=${FIO_DIRECT:-1}

# job NAME RW BS ENGINE DEPTH NUMJOBS: one fio run; a failure prints "RESULT NAME failed".
job() {
	out=$(fio --name="$1" --filename="$target" --rw="$2" --bs="$3" --ioengine="$4" --iodepth="$5" \
		--numjobs="$6" --group_reporting --direct="$direct" --time_based --runtime="$runtime" \
		--ramp_time=2 ${FIO_SIZE:+--size=$FIO_SIZE} --randrepeat=0 --norandommap \
		--output-format=terse --terse-version=3 --percentile_list=99 2>&1 | grep '^3;')
	echo "RESULT $1 ${out:-failed}"
}

case $kind in
blk)
	job randread-4k-qd1 randread 4k libaio 1 1
	job randread-4k-qd64 randread 4k libaio 64 1
	job randwrite-4k-qd64 randwrite 4k libaio 64 1
	job seqread-128k-qd16 read 128k libaio 16 1
	;;
fs)
	for n in 1 4; do
		job "randread-4k-psync-j$n" randread 4k psync 1 "$n"
		job "randread-4k-qd64-j$n" randread 4k libaio 64 "$n"
		job "randwrite-4k-psync-j$n" randwrite 4k psync 1 "$n"
		job "randwrite-4k-qd64-j$n" randwrite 4k libaio 64 "$n"
		job "seqread-128k-qd16-j$n" read 128k libaio 16 "$n"
	done
	;;
*)
	echo "fio-jobs.sh: unknown kind $kind" >&2
	exit 2
	;;
esac
