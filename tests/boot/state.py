#!/usr/bin/env python3
"""state.py: ringvm's state report (SIGUSR2) on a running firmware payload on this machine's /dev/kvm.

A payload that polls COM1 (firmware/payload.S, MODE_WAIT) runs with two vCPUs (the second, never
started, sits in KVM_RUN as a halted vCPU does) and a disk its driver never starts; SIGUSR2 must
bring every line of the report (begin, PICs, IOAPIC, each queue, each vCPU's state, LAPIC and
events, end with everyone answered), under the seccomp filters ringvm runs with, and the guest must
go on: a byte typed on its console (a pty: the console reads only a terminal) ends it with its own
status 42. Then: a halted vCPU (MODE_HALT) says so; RINGVM_STATE_LOG takes the lines off stderr;
under --jail (root) the outer process passes the signal to the jailed VMM. A VM given a TSC rate its
host cannot run (tests/support/tsc_skew.c, LD_PRELOAD) gets the host's rate from ringvm.
Env: RINGVM (the binary), B (the build, for tsc_skew.so), FIRMWARE_DIR (default build/firmware). TAP output.
"""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

ringvm = os.environ.get("RINGVM", "build/ringvm")
fw = os.environ.get("FIRMWARE_DIR", "build/firmware")
env = dict(os.environ, RINGVM_ALLOW_PVM="1")
n = 0
fails = 0


def check(ok, what, detail=""):
    global n, fails
    n += 1
    if ok:
        print(f"ok {n} - {what}", flush=True)
    else:
        fails += 1
        print(f"not ok {n} - {what}" + (f" ({detail})" if detail else ""), flush=True)


class Vm:
    """ringvm run on a payload, stdin a pty (the console's input), stdout and stderr read here."""

    def __init__(self, payload, args=(), extra_env=None):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [ringvm, "run", "--kernel", f"{fw}/{payload}.elf", "--initrd", "none", "--memory", "64M",
             *args],
            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(env, **(extra_env or {})))
        os.close(slave)
        self.out = b""
        self.err = b""

    def read_until(self, pattern, where="err", timeout=20):
        """Collect output until pattern (bytes regex) appears in stdout or stderr; bounded."""
        deadline = time.monotonic() + timeout
        streams = {self.proc.stdout.fileno(): "out", self.proc.stderr.fileno(): "err"}
        while not re.search(pattern, getattr(self, where)):
            left = deadline - time.monotonic()
            if left <= 0 or not streams:
                return False
            ready, _, _ = select.select(list(streams), [], [], left)
            for fd in ready:
                data = os.read(fd, 65536)
                if not data:
                    del streams[fd]
                setattr(self, streams.get(fd, "out"), getattr(self, streams.get(fd, "out")) + data)
        return True

    def finish(self, timeout=20):
        """Wait for the exit (SIGKILL after timeout: never a hang); the rest of the output."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.out += out
        self.err += err
        os.close(self.master)
        return self.proc.returncode


def lines(text, seq):
    return [l for l in text.decode(errors="replace").splitlines() if l.startswith(f"ringvm-state: #{seq} ")]


def field(line, key):
    m = re.search(rf"(?:^| ){key}=(\S+)", line)
    return m.group(1) if m else None


def one(report, pattern):
    found = [l for l in report if re.search(pattern, l)]
    return found[0] if len(found) == 1 else None


img = tempfile.NamedTemporaryFile(prefix="ringvm-state-", suffix=".img")
img.truncate(1 << 20)

# A running guest, two vCPUs, a disk.
vm = Vm("wait", ["--cpus", "2", "--disk", f"{img.name},queues=2"])
check(vm.read_until(rb"hello from firmware", "out"), "the payload runs", vm.err.decode())
vm.proc.send_signal(signal.SIGUSR2)
check(vm.read_until(rb"ringvm-state: #1 end [^\n]*\n"), "SIGUSR2: the report ends", vm.err.decode())
r = lines(vm.err, 1)
for l in r:
    print(f"# {l}")
check(r and re.match(r"ringvm-state: #1 begin pid=\d+ vcpus=2 ", r[0]), "it begins with the pid and the vCPU count")
check(one(r, r" pic-master irr=") and one(r, r" pic-slave irr=") and one(r, r" ioapic irr="),
      "the PICs and the IOAPIC (KVM_GET_IRQCHIP on the main thread)")
vqs = [l for l in r if " vq " in l]
check(len(vqs) == 2 and all('"virtio-blk on virtio-mmio@' in l and l.endswith("stopped status=0x0") for l in vqs)
      and " q0 requestq0 " in vqs[0] and " q1 requestq1 " in vqs[1],
      "each queue of the disk is named; no driver started them: stopped, status 0", "; ".join(vqs))
cpu0 = one(r, r" vcpu 0 mp_state=")
cpu1 = one(r, r" vcpu 1 mp_state=")
check(cpu0 and field(cpu0, "mp_state") == "runnable" and field(cpu0, "apic_base") == "0xfee00900",
      "vCPU 0: polling (runnable), the BSP's APIC base", cpu0)
check(cpu1 and field(cpu1, "mp_state") == "uninitialized" and field(cpu1, "apic_base") == "0xfee00800",
      "vCPU 1, waiting in KVM_RUN for an INIT it never gets, was kicked out and answered", cpu1)
lapic0 = one(r, r" vcpu 0 lapic ")
check(lapic0 and field(lapic0, "lint0") == "0x700" and field(lapic0, "lint1") == "0x10400"
      and field(lapic0, "id") == "0" and field(lapic0, "irr") == "-" and field(lapic0, "timer_masked") == "1",
      "vCPU 0's LAPIC as ringvm set it up (LINT0 ExtINT, LINT1 NMI masked) and the payload left it", lapic0)
check(one(r, r" vcpu 1 lapic id=1 ") and one(r, r" vcpu 0 events irq_injected=0 ")
      and one(r, r" vcpu 1 events "), "each vCPU's LAPIC and events")
check(r and r[-1].startswith("ringvm-state: #1 end queues=0/0 vcpus=2/2 "), "everybody answered", r[-1] if r else "")
vm.proc.send_signal(signal.SIGUSR2)
check(vm.read_until(rb"ringvm-state: #2 end queues=0/0 vcpus=2/2 "), "a second SIGUSR2, a second report")
os.write(vm.master, b"q")
rc = vm.finish()
check(rc == 42, "the guest went on and ended by itself (a byte on its console: status 42)",
      f"status {rc}: {vm.err.decode()[-400:]}")

# A halted vCPU.
vm = Vm("halt")
check(vm.read_until(rb"hello from firmware", "out"), "the halting payload runs")
# "hello" is written while the vCPU is out for its last OUT, before its HLT: ask again (bounded)
# until a report finds it halted; every later one must say so too.
cpu0 = None
for seq in range(1, 11):
    vm.proc.send_signal(signal.SIGUSR2)
    vm.read_until(rb"ringvm-state: #%d end [^\n]*\n" % seq)
    cpu0 = one(lines(vm.err, seq), r" vcpu 0 mp_state=")
    if cpu0 and field(cpu0, "mp_state") == "halted":
        break
check(cpu0 and field(cpu0, "mp_state") == "halted" and field(cpu0, "if") == "0",
      "a vCPU halted (interrupts off) is kicked out, says halted, and goes back", cpu0)
vm.proc.send_signal(signal.SIGUSR2)
vm.read_until(rb"ringvm-state: #%d end [^\n]*\n" % (seq + 1))
again = one(lines(vm.err, seq + 1), r" vcpu 0 mp_state=")
check(again and field(again, "mp_state") == "halted",
      "back in KVM_RUN after the kick, it is still halted at the next report", again)
vm.proc.send_signal(signal.SIGTERM)
rc = vm.finish()
check(rc == 128 + signal.SIGTERM, "then SIGTERM ends it as before", f"status {rc}")

# RINGVM_STATE_LOG: appended to that file, nothing on stderr.
log = tempfile.NamedTemporaryFile(prefix="ringvm-state-", suffix=".log")
log.write(b"earlier line\n")
log.flush()
vm = Vm("wait", extra_env={"RINGVM_STATE_LOG": log.name})
vm.read_until(rb"hello from firmware", "out")
vm.proc.send_signal(signal.SIGUSR2)
in_file = b""
for _ in range(200):  # the file fills from other threads: wait for its end line, bounded
    in_file = open(log.name, "rb").read()
    if re.search(rb"ringvm-state: #1 end ", in_file):
        break
    time.sleep(0.05)
os.write(vm.master, b"q")
rc = vm.finish()
check(in_file.startswith(b"earlier line\n") and re.search(rb"\nringvm-state: #1 vcpu 0 lapic ", in_file)
      and re.search(rb"ringvm-state: #1 end queues=0/0 vcpus=1/1 ", in_file),
      "RINGVM_STATE_LOG: the report is appended to the file", in_file.decode(errors="replace")[-300:])
check(b"ringvm-state" not in vm.err and rc == 42, "and not on stderr; the guest ended as before",
      f"status {rc}")

# A VM whose KVM gives new vCPUs a TSC rate the host cannot run (tests/support/tsc_skew.c sets it on
# purpose, as a kvm module loaded before its host's TSC calibration was final does: seen in the KVM
# lab, where guests then stood still for minutes): ringvm says so, gives the vCPUs the host's rate,
# and KVM's view of each vCPU's TSC moves. Without the mend both read tsc=0 here.
skew = os.path.join(os.environ.get("B", "build"), "tests", "tsc_skew.so")
asan = os.environ.get("ASAN_OPTIONS", "")
vm = Vm("wait", ["--cpus", "2"], extra_env={
    "LD_PRELOAD": skew,
    # The shim loads before the sanitizer's runtime in the ASan build, which refuses that by default.
    "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"})
ran = vm.read_until(rb"hello from firmware", "out")
check(ran, "a payload on a VM given a TSC rate 1 % below the host's runs", vm.err.decode()[-400:])
said = re.search(rb"tsc_skew: the VM's TSC rate set to (\d+) kHz \(KVM's was (\d+)\); scales TSC rates: (\w+)", vm.err)
check(said is not None, "the shim set the VM's rate", vm.err.decode()[-400:])
tscs = []
for seq in (1, 2):
    vm.proc.send_signal(signal.SIGUSR2)
    vm.read_until(rb"ringvm-state: #%d end [^\n]*\n" % seq)
    r = lines(vm.err, seq)
    tscs.append([field(one(r, rf" vcpu {i} mp_state=") or "", "tsc") for i in (0, 1)])
os.write(vm.master, b"q")
rc = vm.finish()
if said and said.group(3) == b"yes":
    n += 1
    print(f"ok {n} # SKIP this host's KVM scales TSC rates: the rate runs, nothing to mend")
else:
    mend = re.search(rb"ringvm: KVM gave vCPU 0 a TSC rate it cannot run here \((\d+) kHz[^\n]*the vCPUs run at "
                     rb"the host's (\d+) kHz\n", vm.err)
    check(mend and said and mend.group(1) == said.group(1) and mend.group(2) == said.group(2),
          "ringvm says, once, which rate KVM kept and that the vCPUs run at the host's",
          vm.err.decode()[-600:])
    check(vm.err.count(b"a TSC rate it cannot run") == 1, "said once for the VM, not per vCPU")
    moving = all(a and b and a.isdigit() and b.isdigit() and int(a) > 0 and int(b) > int(a)
                 for a, b in zip(tscs[0], tscs[1]))
    check(moving, "the state report: KVM's view of both vCPUs' TSC is not 0 and moves between reports",
          str(tscs))
check(rc == 42, "the guest ended by itself as before", f"status {rc}: {vm.err.decode()[-300:]}")

# --jail: the process the user started passes SIGUSR2 to the jailed VMM.
if os.geteuid() == 0:
    vm = Vm("wait", ["--jail"])
    vm.read_until(rb"hello from firmware", "out")
    vm.proc.send_signal(signal.SIGUSR2)
    ok = vm.read_until(rb"ringvm-state: #1 end queues=0/0 vcpus=1/1 ")
    os.write(vm.master, b"q")
    rc = vm.finish()
    check(ok and rc == 42, "--jail: the report comes from the jailed VMM, which goes on",
          f"status {rc}: {vm.err.decode()[-300:]}")
else:
    n += 1
    print(f"ok {n} # SKIP --jail needs root")

print(f"1..{n}")
sys.exit(1 if fails else 0)
