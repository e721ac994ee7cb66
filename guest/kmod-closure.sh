#!/bin/sh
# kmod-closure.sh: list the module files needed to load MODULE..., dependencies first, no repeats.
#
#   guest/kmod-closure.sh MODDIR MODULE...
#
# MODDIR is lib/modules/RELEASE of an unpacked kernel. Modules built into the kernel
# (modules.builtin) and unknown names print nothing; each output line is a path relative to MODDIR.
# Loading the lines in order with insmod/finit_module satisfies every dependency.
set -eu
moddir=$1
shift
awk -v want="$*" '
function base(p,   n, a) { n = split(p, a, "/"); sub(/\.ko(\.[a-z]+)?$/, "", a[n]); gsub(/-/, "_", a[n]); return a[n] }
function visit(m,   i, n, d) {
	if (m in seen) return
	seen[m] = 1
	if (!(m in path)) return
	n = split(deps[m], d, " ")
	for (i = 1; i <= n; i++) visit(base(d[i]))
	print path[m]
}
{
	f = $1; sub(/:$/, "", f)
	m = base(f)
	path[m] = f
	$1 = ""; deps[m] = $0
}
END {
	n = split(want, w, " ")
	for (i = 1; i <= n; i++) { x = w[i]; gsub(/-/, "_", x); visit(x) }
}' "$moddir/modules.dep"
