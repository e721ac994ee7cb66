#!/bin/bash
# fs_mq.sh: virtio-fs with several request queues. Linux 6.1 drives one request queue; 6.12 (from
# bookworm-backports) maps CPUs to queues, so with queues=2 and writers pinned to each vCPU both
# queue workers (threads vq1 and vq2 of ringvm) must serve requests, and the data must be intact.
# Env: RINGVM; KERNEL and INITRD (default: the 6.12 pair `make guest-bpo` builds; `make test` does).
# TAP. With the 6.1 pair the queue check must fail: that is how it was seen to be able to.
set -u
. "$(dirname "$0")/lib.sh"
it_init fsmq
kernel=${KERNEL:-build/guest/kernel-bpo/vmlinuz}
initrd=${INITRD:-build/guest/initramfs-bpo.img}

mkdir "$tmp/share"
# Two writers, one per vCPU, each 8 MiB in 64 KiB writes with an fsync; then the guest reports and
# waits (until the host ends it) so the host can look at ringvm's queue threads while it still runs.
VM_TIMEOUT=600 vm_bg --kernel "$kernel" --initrd "$initrd" --cpus 2 --memory 768M \
	--share "$tmp/share:/mnt,queues=2" -- sh -c '
	uname -r
	for c in 0 1; do
		taskset -c $c dd if=/dev/urandom of=/mnt/w$c bs=64k count=128 conv=fsync 2>/dev/null &
	done
	wait
	for c in 0 1; do taskset -c $c sha256sum /mnt/w$c; done
	echo READY
	exec sleep 100000'
if ! wait_output READY; then
	notok "6.12 guest with queues=2 did not finish its writes (stdout: $(tail -c 300 "$tmp/out"); stderr: $(tail -c 300 "$tmp/err"))"
	it_done
fi
grep -q '^6\.12' "$tmp/out" && ok "the bookworm-backports 6.12 kernel boots with a virtio-fs share" ||
	notok "kernel release: $(head -n1 "$tmp/out")"

# Voluntary context switches of each queue thread: a worker that served kicks has slept and woken
# once per batch at least; an idle one only blocked once.
vmm=$(vmm_pid)
busy=0
for t in /proc/"${vmm:-0}"/task/*; do
	name=$(cat "$t/comm" 2>/dev/null)
	case $name in vq1 | vq2) ;; *) continue ;; esac
	sw=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status")
	echo "# thread $name: $sw voluntary context switches"
	[ "${sw:-0}" -gt 20 ] && busy=$((busy + 1))
done
[ "$busy" = 2 ] && ok "both request queues (vq1, vq2) served requests" ||
	notok "only $busy of 2 request-queue workers were busy"

vm_kill TERM
good=1
for c in 0 1; do
	want=$(awk -v f="/mnt/w$c" '$2 == f {print $1}' "$tmp/out")
	have=$(sha256sum <"$tmp/share/w$c" | cut -d' ' -f1)
	[ -n "$want" ] && [ "$want" = "$have" ] || good=0
done
[ "$good" = 1 ] && ok "both writers' files are intact on the host (sha256 guest = host)" ||
	notok "checksums differ: $(grep /mnt/ "$tmp/out" | tr '\n' ' ')"
it_done
