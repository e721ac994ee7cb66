#!/usr/bin/python3
"""gdb_raw.py: drive ringvm's gdb stub byte by byte, for what gdb -batch cannot show: Ctrl-C, acks,
malformed and hostile packets. Prints TAP lines (numbered from --first) and no plan.

usage: gdb_raw.py --elf build/firmware/debug.elf --socket PATH --first N
The VM must be the debug payload started with --gdb unix:PATH --gdb-wait. Ends with the guest
released to exit with status 5 (through an X write), so the caller checks ringvm's status too.
"""
import argparse
import socket
import struct
import subprocess
import sys

KERNEL_VMA = 0xffffffff80000000


class Tap:
    def __init__(self, first):
        self.n = first - 1
        self.failed = 0

    def check(self, cond, what, detail=""):
        self.n += 1
        if cond:
            print(f"ok {self.n} - {what}")
        else:
            self.failed += 1
            print(f"not ok {self.n} - {what} {detail}")
        sys.stdout.flush()


def checksum(payload):
    return sum(payload) & 0xff


def frame(payload):
    return b"$" + payload + b"#" + b"%02x" % checksum(payload)


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(20)
        self.s.connect(path)
        self.buf = b""

    def raw(self, data):
        self.s.sendall(data)

    def byte(self):
        while not self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("the stub closed the connection")
            self.buf += chunk
        b, self.buf = self.buf[:1], self.buf[1:]
        return b

    def ack(self):
        """The next '+' or '-' (skipping nothing else: a packet here would be a protocol error)."""
        return self.byte()

    def packet(self):
        """The next packet's payload; its checksum is verified and acknowledged."""
        while self.byte() != b"$":
            pass
        body = b""
        while True:
            c = self.byte()
            if c == b"#":
                break
            body += c
        cs = self.byte() + self.byte()
        if int(cs, 16) != checksum(body):
            raise ValueError(f"bad checksum from the stub on {body!r}")
        try:
            self.raw(b"+")
        except OSError:
            pass  # the stub may close right after its last packet (W: the guest is gone)
        return body

    def cmd(self, payload):
        """Send a packet, expect '+', return the reply payload."""
        self.raw(frame(payload))
        a = self.ack()
        if a != b"+":
            raise ValueError(f"stub answered {a!r} to {payload!r}")
        return self.packet()


def symbols(elf):
    out = subprocess.run(["nm", elf], check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms


def elf_bytes(elf, addr, n):
    """n bytes of the ELF file at load address addr (through its PT_LOAD program headers)."""
    with open(elf, "rb") as f:
        data = f.read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        ptype, _, off, vaddr, paddr, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if ptype == 1 and vaddr <= addr and addr + n <= vaddr + filesz:
            return data[off + addr - vaddr:off + addr - vaddr + n]
    raise ValueError(f"{addr:#x} is not in a loaded segment of {elf}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elf", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--via", choices=("hw", "sw", "step"), default="hw",
                    help="how to get past the payload's paging set-up: a debug-register or an int3"
                    " breakpoint at spin, or single steps to main64 where the host has neither")
    a = ap.parse_args()
    sym = symbols(a.elf)
    t = Tap(a.first)
    c = Client(a.socket)

    r = c.cmd(b"qSupported:swbreak+;hwbreak+")
    t.check(b"PacketSize=" in r and b"qXfer:features:read+" in r, "qSupported names the packet size and target.xml", r)
    r = c.cmd(b"?")
    t.check(r.startswith(b"T05thread:1;"), "under --gdb-wait the first stop is SIGTRAP on thread 1", r)

    # Hostile input: each is refused, and the stub still answers afterwards.
    c.raw(b"$g#00")
    t.check(c.ack() == b"-", "a packet with a wrong checksum is answered '-'")
    c.raw(b"$" + b"A" * 20000 + b"#00")
    t.check(c.ack() == b"-", "a packet longer than PacketSize is answered '-'")
    c.raw(b"$?#zz")
    t.check(c.ack() == b"-", "a non-hex checksum is answered '-'")
    c.raw(b"garbage\x00\xff\r\n")
    r = c.cmd(b"?")
    t.check(r.startswith(b"T05"), "noise between packets is ignored; the stub still answers", r)
    t.check(c.cmd(b"qNoSuchThing") == b"", "an unknown packet gets the empty reply")
    for bad in (b"m", b"mzz,4", b"m100000", b"m100000,", b"M100000,4:zz", b"M100000,4:00", b"X100000,2:}",
                b"p", b"pffff", b"P0=zz", b"Z0,1", b"Z2,100001,4", b"Z2,100000,3", b"Hg99", b"T99",
                b"vCont;x", b"vCont;s:99", b"G00", b"qXfer:features:read:other.xml:0,10",
                b"qXfer:features:read:target.xml:ffffff,10", b"m" + b"f" * 17 + b",1"):
        r = c.cmd(bad)
        t.check(r.startswith(b"E"), f"malformed or impossible {bad[:24]!r} is an error reply", r)
    r = c.cmd(b"m%x,4" % sym["main64"])
    t.check(r.startswith(b"E"), "the upper half is not mapped before the payload's paging: error", r)
    r = c.cmd(b"Z0,%x,1" % sym["tick"])
    t.check(r.startswith(b"E"), "a breakpoint at an address that does not translate is refused", r)
    want = elf_bytes(a.elf, sym["_start"], 4).hex().encode()
    r = c.cmd(b"m%x,4" % (sym["_start"]))
    t.check(r == want, "memory at _start is the ELF's bytes (paging off: linear is physical)", r)
    xml = c.cmd(b"qXfer:features:read:target.xml:0,3fff")
    t.check(xml.startswith(b"l<?xml") and xml.count(b"<reg ") > 60 and b"i386:x86-64" in xml,
            "the target description comes in one piece", xml[:40])
    nregs = xml.count(b"<reg ")
    r = c.cmd(b"p%x" % nregs)
    t.check(r.startswith(b"E"), "a register past the last is an error", r)
    r = c.cmd(b"P12=08000000")  # cs (regnum 18 = 0x12): changing a selector is refused
    t.check(r.startswith(b"E"), "changing a segment selector is refused", r)
    r = c.cmd(b"g")
    t.check(len(r) % 2 == 0 and len(r) > 1000, "g returns every register", len(r))
    # Writing back exactly what 'g' returned is accepted (selectors unchanged).
    t.check(c.cmd(b"G" + r) == b"OK", "G with the values g returned is accepted")

    # Stop at the spin loop: a hardware breakpoint there, or an int3 at long_entry (identity-mapped,
    # settable before the payload turns paging on) and then one at spin.
    if a.via == "hw":
        t.check(c.cmd(b"Z1,%x,1" % sym["spin"]) == b"OK", "hardware breakpoint at spin inserted")
        r = c.cmd(b"vCont;c")
        t.check(r.startswith(b"T05thread:1;") and b"hwbreak" in r, "vCont;c stops at the hardware breakpoint", r)
        t.check(c.cmd(b"z1,%x,1" % sym["spin"]) == b"OK", "hardware breakpoint removed")
    elif a.via == "sw":
        t.check(c.cmd(b"Z0,%x,1" % sym["long_entry"]) == b"OK", "software breakpoint at long_entry inserted")
        r = c.cmd(b"vCont;c")
        t.check(r.startswith(b"T05thread:1;") and b"swbreak" in r, "vCont;c stops at the software breakpoint", r)
        t.check(c.cmd(b"z0,%x,1" % sym["long_entry"]) == b"OK" and c.cmd(b"Z0,%x,1" % sym["spin"]) == b"OK",
                "moved to spin, now that the upper half is mapped")
        r = c.cmd(b"vCont;c")
        t.check(r.startswith(b"T05thread:1;") and b"swbreak" in r and c.cmd(b"z0,%x,1" % sym["spin"]) == b"OK",
                "and stops there", r)
    else:
        steps, rip, replies = 0, 0, True
        while rip != sym["main64"] and steps < 5000 and replies:
            r = c.cmd(b"vCont;s:1")
            replies = r.startswith(b"T05thread:1;")
            rip = int.from_bytes(bytes.fromhex(c.cmd(b"p10").decode()), "little")
            steps += 1
        t.check(rip == sym["main64"], f"vCont;s:1 steps vCPU 0 alone to main64 ({steps} steps)", hex(rip))
    release = sym["release"]
    t.check(c.cmd(b"M%x,1:00" % release) == b"OK", "release = 0 written by virtual address (M)")
    t.check(c.cmd(b"m%x,1" % release) == b"00", "and reads back through the page walk")
    # The payload now spins forever: only Ctrl-C can stop it. A Ctrl-C may come before vCPU 0 has
    # walked from main64 into the loop (under the lab's emulated KVM that walk is slow): then it was
    # stopped on its way, and it is let go on until a Ctrl-C finds it in the loop (20 tries at most).
    rip, tries = 0, 0
    while not sym["spin"] <= rip < sym["spin_end"] and tries < 20:
        tries += 1
        c.raw(frame(b"vCont;c"))
        acked = c.ack() == b"+"
        c.raw(b"\x03")
        r = c.packet()
        c.cmd(b"Hg1")
        regs = bytes.fromhex(c.cmd(b"p10").decode())  # rip, regnum 16
        rip = int.from_bytes(regs, "little")
        if tries == 1:
            t.check(acked, "continue acknowledged")
            t.check(r.startswith(b"T02thread:"), "Ctrl-C (0x03) stops the guest with SIGINT", r)
        # main64's way to the loop: its own code, and tick(), which it calls ten times first.
        on_way = sym["main64"] <= rip < sym["spin_end"] or sym["tick"] <= rip < sym["int3_handler"]
        if not (r.startswith(b"T02thread:") and on_way):
            break  # not stopped, or stopped outside main64's way to the loop: the check below says so
    t.check(sym["spin"] <= rip < sym["spin_end"], f"after Ctrl-C the guest is in its spin loop ({tries} Ctrl-C)",
            hex(rip))
    t.check(c.cmd(b"qfThreadInfo") == b"m1,2" and c.cmd(b"qsThreadInfo") == b"l", "both vCPUs are threads")
    t.check(c.cmd(b"T2") == b"OK" and c.cmd(b"T3").startswith(b"E"), "thread 2 is alive, thread 3 is not")
    # X: binary data with escapes; exit_code = 5 and release = 1 in one write ('}' escapes nothing here).
    ec = sym["exit_code"]
    t.check(release == ec + 1, "exit_code and release are adjacent")
    t.check(c.cmd(b"X%x,2:\x05\x01" % ec) == b"OK", "X writes binary data")
    t.check(c.cmd(b"X%x,1:}\x5d" % sym["watched"]) == b"OK" and c.cmd(b"m%x,1" % sym["watched"]) == b"7d",
            "X unescapes '}'")
    t.check(c.cmd(b"QStartNoAckMode") == b"OK", "no-ack mode")
    c.raw(frame(b"vCont;c"))
    r = c.packet()
    t.check(r == b"W05", "the guest runs to its end: W05 (its exit status)", r)
    return t


if __name__ == "__main__":
    tap = main()
    sys.exit(1 if tap.failed else 0)
