#!/bin/sh
# guest-fs.sh 9p|virtiofs DIR [RUNTIME [all|fio|meta]]: the fs benchmark in the guest: mount DIR if 9p, fio on
# DIR/data.bin, then the metadata workload on a copy of /bench/tree.tar (the last argument picks either part).
# Prints RESULT and META lines (see fio-jobs.sh).
kind=$1
dir=$2
if [ "$kind" = 9p ]; then
	# msize 512 KiB: 9p's default (128 KiB in 6.1) would cap the 128k jobs at one request each.
	mkdir -p "$dir" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 bench "$dir" || {
		echo "META mount failed"
		exit 1
	}
fi
parts=${4:-all}
[ "$parts" = meta ] || /bench/fio-jobs.sh fs "$dir/data.bin" "${3:-8}"
[ "$parts" = fio ] && exit 0

# GNU tools from peers/mktools.sh by full path: busybox sh runs its own applet for some names (xargs)
# whatever PATH says, and busybox has no %N in date, no -d in xargs.
bin=/usr/local/bin
now() { $bin/date +%s.%N; }
# step NAME CMD...: time CMD after dropping the guest's caches, so the share serves every lookup.
step() {
	name=$1
	shift
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(now)
	if "$@"; then
		echo "META $name $(now) $t0" | awk '{ printf "META %s %.3f\n", $2, $3 - $4 }'
	else
		echo "META $name failed"
	fi
}
tree=$dir/tree.$$
untar() { mkdir -p "$tree" && $bin/tar -xf /bench/tree.tar -C "$tree" && $bin/sync; }
count() { $bin/find "$tree" >/tmp/list && echo "META files $($bin/wc -l </tmp/list)"; }
usage() { $bin/du -s "$tree" >/dev/null; }
# Eight stat(1) processes at once over the file list, 64 names per call.
storm() { $bin/xargs -d '\n' -P 8 -n 64 $bin/stat -c %s </tmp/list >/dev/null; }
remove() { rm -rf "$tree"; }
step untar untar
step find count
step du usage
step stat-storm storm
step rm remove
