#!/bin/sh
# stats.sh: read numbers (one per line) on stdin, print "median M (min A, p90 B, max C, n N)".
sort -g | awk '
{ v[NR] = $1 }
END {
	if (NR == 0) { print "no samples"; exit 1 }
	m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	p90 = v[int(0.9 * (NR - 1)) + 1]
	printf "median %.1f (min %.1f, p90 %.1f, max %.1f, n %d)\n", m, v[1], p90, v[NR], NR
}'
