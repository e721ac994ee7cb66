#!/bin/sh
# privilege.sh: while a guest runs, every ringvm thread holds only the capabilities its shares need,
# with no_new_privs, and is confined by one seccomp filter of its own (its role's: vmm/seccomp.h);
# SIGTERM still ends it. Root only (otherwise there is nothing to drop).
# Env: RINGVM (the binary), FIRMWARE_DIR (default build/firmware). TAP output.
set -u
. "$(dirname "$0")/lib.sh"
ringvm=${RINGVM:-build/ringvm}
fw=${FIRMWARE_DIR:-build/firmware}
export RINGVM_ALLOW_PVM=1
n=0
fails=0
if [ "$(id -u)" != 0 ]; then
	echo "ok 1 # SKIP needs root: an unprivileged ringvm holds no capability to drop"
	echo "1..1"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/share"
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }

# check DESCRIPTION WANT_CAPEFF [ringvm args]: boot the halting payload, inspect, SIGTERM.
check() {
	desc=$1 want=$2
	shift 2
	rm -f "$tmp/out" # the last run's "hello" must not count for this one
	"$ringvm" run --kernel "$fw/halt.elf" --initrd none --memory 64M "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
	pid=$!
	# Wait until the guest printed (the vCPU runs, setup is over); not a verdict.
	i=0
	while ! grep -q "hello" "$tmp/out" 2>/dev/null && [ $i -lt 400 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	tasks=0 wrong="" unconfined="" names=""
	for st in /proc/"$pid"/task/*/status; do
		[ -r "$st" ] || continue
		tasks=$((tasks + 1))
		eff=$(awk '/^CapEff:/ { print $2 }' "$st")
		prm=$(awk '/^CapPrm:/ { print $2 }' "$st")
		bnd=$(awk '/^CapBnd:/ { print $2 }' "$st")
		nnp=$(awk '/^NoNewPrivs:/ { print $2 }' "$st")
		name=$(awk '/^Name:/ { print $2 }' "$st")
		if [ "$eff" != "$want" ] || [ "$prm" != "$want" ] || [ "$bnd" != "$want" ] || [ "$nnp" != 1 ]; then
			wrong="$wrong $name:eff=$eff,prm=$prm,bnd=$bnd,nnp=$nnp"
		fi
		# Mode 2 (filter) with exactly one filter: the thread's own, nothing inherited or stacked.
		sc=$(awk '/^Seccomp:/ { m = $2 } /^Seccomp_filters:/ { f = $2 } END { print m "/" f }' "$st")
		[ "$sc" = "2/1" ] || unconfined="$unconfined $name:$sc"
		names="$names $name"
	done
	if [ "$tasks" -ge 2 ] && [ -z "$wrong" ]; then
		ok "$desc: $tasks threads hold CapEff=CapPrm=CapBnd=$want, no_new_privs"
	else
		bad "$desc: want $want on >= 2 threads, got $tasks threads:$wrong ($(cat "$tmp/err"))"
	fi
	# The threads of every role: the main thread, the vCPU, a share's queue workers (made
	# before the guest runs, not at DRIVER_OK).
	want_names="ringvm vcpu0${3:+ vq0 vq1}"
	missing=""
	for w in $want_names; do
		case " $names " in *" $w "*) ;; *) missing="$missing $w" ;; esac
	done
	if [ "$tasks" -ge 2 ] && [ -z "$unconfined" ] && [ -z "$missing" ]; then
		ok "$desc: every thread ($names ) runs under one seccomp filter of its own"
	else
		bad "$desc: seccomp mode/filters per thread:$unconfined; threads missing:$missing (have$names)"
	fi
	# SIGTERM must end it (a bounded wait, then SIGKILL).
	stop_bounded "$pid"
	case $stop_status in
	143) ok "$desc: SIGTERM ends ringvm (status 143)" ;;
	hung) bad "$desc: SIGTERM did not end ringvm within 10 s" ;;
	*) bad "$desc: status $stop_status after SIGTERM, want 143" ;;
	esac
}
# Bits: CHOWN 0, DAC_OVERRIDE 1, FOWNER 3, FSETID 4, SETGID 6, SETUID 7, MKNOD 27, SETFCAP 31.
check "no share" 0000000000000000
check "read-only share" 00000000000000c2 --share "$tmp/share:/mnt,readonly"
check "writable share" 00000000800000db --share "$tmp/share:/mnt"
check "writable share with dev" 00000000880000db --share "$tmp/share:/mnt,dev"
echo "1..$n"
[ "$fails" = 0 ]
