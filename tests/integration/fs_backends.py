#!/usr/bin/env python3
# fs_backends.py: the data checks of tests/integration/fs_backends.sh, the guest's side and the host's
# side written once, so they cannot drift apart.
#
# The shell script builds the host file systems, boots the guests and turns the lines printed by the
# verify-* commands into TAP. The guest prints hashes only (the console is slow); every expected value
# is computed on the host from the same deterministic bytes (gen), never taken from the guest.
#
#   make-files DIR                  (host) DIR/r: the files the guest reads; DIR/w: where it writes
#   guest-shares NAME=DIR...        (guest, --root /) per share: read, mmap, dd, cp, write, follow a
#                                   file the host appends to; prints "NAME KEY VALUE" lines
#   append FILE                     (host) waits for FILE.start (made by the guest), appends GROW to FILE
#   verify-shares OUT NAME=DIR...   (host) one "ok - TEXT" / "not ok - TEXT" line per check and share
#   make-image IMG                  (host) a disk image of DISK_SIZE bytes
#   disk-script                     (host) the busybox sh program the disk guest runs over /dev/vd?
#   verify-disks OUT LABEL NAME=IMG...  (host) the checks of each disk, given in --disk order
import hashlib
import mmap
import os
import subprocess
import sys
import time

MiB = 1 << 20


def gen(n, seed):
    """n bytes that depend only on seed: what the guest writes and the host expects."""
    return hashlib.shake_256(seed.encode()).digest(n) if n else b""


def sha(data):
    return hashlib.sha256(data).hexdigest()


# --- the files the guest reads: around 4 KiB, 128 KiB, 1 MiB, 3 MB, and odd sizes ------------------
FILES = {"f1": 1, "f4095": 4095, "f4096": 4096, "f4097": 4097, "f131072": 131072,
         "seq588895": 588895, "f1048576": MiB, "f3000001": 3000001}


def file_data(name):
    if name == "seq588895":  # the file: `seq 1 100000`
        return "".join("%d\n" % i for i in range(1, 100001)).encode()
    return gen(FILES[name], name)


# Reads through dd (block size = read size), and copies made in the guest into w/ (host compares).
DD_READS = [("f4097", 1), ("f131072", 512), ("f3000001", 4096), ("f3000001", 65536), ("f3000001", MiB)]
COPIES = [("cp", "seq588895", 0), ("cp", "f3000001", 0), ("dd", "f131072", 512),
          ("dd", "f1048576", 4096), ("dd", "f3000001", 65536), ("dd", "f3000001", MiB)]


def copy_name(tool, f, bs):
    return "%s%s_%s" % (tool, bs or "", f)


# --- what the guest writes into w/: (op, size, chunk or offset); the data of op i of file N is
# gen(size, "N:i"). write = O_TRUNC then sequential writes of `chunk`; append = a new O_APPEND open,
# writes of `chunk`; pwrite = one pwrite at the offset (past EOF leaves a hole of zeros).
WRITES = {
    "w1": [("write", 1, 1)],
    "w4097": [("write", 4097, 4097)],
    "w131075": [("write", 131075, 4095)],
    "w1048576": [("write", MiB, MiB)],
    "w3000001": [("write", 3000001, 65543)],
    "append": [("write", 5000, 5000), ("append", 1, 1), ("append", 4095, 4095),
               ("append", 65537, 1000), ("append", MiB + 3, MiB + 3)],
    "offsets": [("write", 3000001, MiB), ("pwrite", 4096, 0), ("pwrite", 1, 1), ("pwrite", 8190, 4095),
                ("pwrite", 100000, 28685), ("pwrite", 65536, MiB - 1), ("pwrite", 10, 2999995),
                ("pwrite", 4097, 3500000)],
}
WRITE_GROUPS = [("writes of 1 B to 3000001 B, whole and in 4095/65543-byte pieces", ["w1", "w4097", "w131075", "w1048576", "w3000001"]),
                ("O_APPEND writes over four opens", ["append"]),
                ("pwrite at offsets 0 to EOF and past it (a hole)", ["offsets"])]


def write_expected(name):
    buf = bytearray()
    for i, (op, size, arg) in enumerate(WRITES[name]):
        data = gen(size, "%s:%d" % (name, i))
        if op == "write":
            buf = bytearray(data)
        elif op == "append":
            buf += data
        else:
            if arg > len(buf):
                buf += bytes(arg - len(buf))
            buf[arg:arg + size] = data
    return bytes(buf)


def write_file(path, name):
    for i, (op, size, arg) in enumerate(WRITES[name]):
        data = gen(size, "%s:%d" % (name, i))
        flags = {"write": os.O_CREAT | os.O_TRUNC, "append": os.O_APPEND, "pwrite": 0}[op]
        fd = os.open(path, os.O_WRONLY | flags, 0o644)
        try:
            if op == "pwrite":
                done = 0
                while done < size:  # pwrite may be short, like write: carry on where it stopped
                    done += os.pwrite(fd, data[done:], arg + done)
            else:
                for off in range(0, size, arg):
                    piece = data[off:off + arg]
                    while piece:
                        piece = piece[os.write(fd, piece):]
            os.fsync(fd)
        finally:
            os.close(fd)


# --- the file the host appends to while the guest reads it --------------------------------------
# Half a MiB: enough for every chunk size below to land several times; each guest pass rereads the
# whole file, so the cost grows with the square of the size (2 MiB took 100-300 s per share in CI).
GROW_SIZE = MiB // 2 + 12345
GROW_CHUNKS = [1, 4095, 4097, 8192, 65536, 7, 12289, 333, 40000]


def grow_data():
    return gen(GROW_SIZE, "grow")


def host_append(path):
    """Wait (20 min at most) for the guest's PATH.start, then append GROW in GROW_CHUNKS pieces."""
    deadline = time.monotonic() + 1200
    while not os.path.exists(path + ".start"):
        if time.monotonic() > deadline:
            sys.exit("append: %s.start never appeared" % path)
        time.sleep(0.2)
    data, off, i = grow_data(), 0, 0
    while off < len(data):
        piece = data[off:off + GROW_CHUNKS[i % len(GROW_CHUNKS)]]
        with open(path, "ab") as f:
            f.write(piece)
        off += len(piece)
        i += 1


def guest_grow(path):
    """Read PATH whole, again and again, and follow it with one open fd (tail -f style), while the
    host appends: every read must be a prefix of GROW. Ends when both saw all of GROW (the guest's
    cached size may lag by its attribute timeout) or after three minutes: the host's appender is a
    process of a loaded L1 too (one minute was not enough for it to start appending, once)."""
    want = grow_data()
    open(path + ".start", "w").close()
    tail = os.open(path, os.O_RDONLY)
    acc = bytearray()
    reads = bad = tailbad = 0
    sizes = set()
    whole = b""
    t0 = time.monotonic()
    deadline = t0 + 180
    first_growth = None
    bufs = [65536, 4095, 1, 131072, 4097]
    while time.monotonic() < deadline:
        with open(path, "rb") as f:
            whole = f.read()
        reads += 1
        if len(whole) and first_growth is None:
            first_growth = time.monotonic() - t0
        sizes.add(len(whole))
        if whole != want[:len(whole)]:
            bad += 1
        while True:
            piece = os.read(tail, bufs[reads % len(bufs)])
            if not piece:
                break
            acc += piece
        if bytes(acc) != want[:len(acc)]:
            tailbad += 1
            acc = bytearray()  # start over from offset 0; the failure is counted
            os.lseek(tail, 0, os.SEEK_SET)
        if len(whole) >= GROW_SIZE and len(acc) >= GROW_SIZE:
            break
        # Idle a moment: the host's appender is a process of L1, whose one vCPU also runs this guest;
        # a guest polling flat out starved it for minutes in the lab (it never started, once).
        time.sleep(0.02)
    os.close(tail)
    return "reads=%d sizes=%d bad=%d tailbad=%d len=%d final=%s tail=%s grew_after=%s took=%.1f" % (
        reads, len(sizes), bad, tailbad, len(whole), sha(whole), sha(bytes(acc)),
        "never" if first_growth is None else "%.1f" % first_growth, time.monotonic() - t0)


# --- the guest's side of the shares ---------------------------------------------------------------
def isolated(fn):
    """fn() in a child process, so that a crash (SIGBUS from an mmap past a short EOF) costs one
    result, not the rest of the run. Returns its value, "error:..." or "died:signalN"."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        try:
            value = fn()
        except Exception as e:  # reported, and the host's comparison fails on it
            value = "error:%s" % str(e).replace(" ", "_")[:120]
        os.write(wr, value.encode())
        os._exit(0)
    os.close(wr)
    data = b""
    while True:
        piece = os.read(rd, 65536)
        if not piece:
            break
        data += piece
    os.close(rd)
    _, status = os.waitpid(pid, 0)
    return "died:signal%d" % os.WTERMSIG(status) if os.WIFSIGNALED(status) else data.decode()


def guest_share(name, d):
    def out(key, fn):
        print("%s %s %s" % (name, key, isolated(fn)), flush=True)

    def dd(*args):
        return subprocess.run(["dd", "status=none"] + list(args), stdout=subprocess.PIPE,
                              check=True).stdout

    def read_mmap(path):
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
            return sha(m[:])

    t0 = time.monotonic()
    r, w = d + "/r/", d + "/w/"
    for f in FILES:
        out("read:" + f, lambda: sha(open(r + f, "rb").read()))
    for f in FILES:
        out("mmap:" + f, lambda: read_mmap(r + f))
    for f, bs in DD_READS:
        out("dd%d:%s" % (bs, f), lambda: sha(dd("if=" + r + f, "bs=%d" % bs)))
    def copy(tool, f, bs):
        dst = w + copy_name(tool, f, bs)
        if tool == "cp":
            subprocess.run(["cp", r + f, dst], check=True)
        else:
            dd("if=" + r + f, "of=" + dst, "bs=%d" % bs)
        return "done"

    def write(n):
        write_file(w + n, n)
        return "done"

    for tool, f, bs in COPIES:
        out("copy:" + copy_name(tool, f, bs), lambda: copy(tool, f, bs))
    for n in WRITES:
        out("wrote:" + n, lambda: write(n))
    t1 = time.monotonic()
    out("grow", lambda: guest_grow(d + "/grow"))
    out("seconds", lambda: "%.1f+%.1f" % (t1 - t0, time.monotonic() - t1))


# --- the host's side of the shares ----------------------------------------------------------------
def host_sha(path):
    try:
        with open(path, "rb") as f:
            return sha(f.read())
    except OSError as e:
        return "host-error:%s" % e.strerror


def verdict(text, problems):
    if problems:
        detail = "; ".join(problems)
        print("not ok - %s (%s)" % (text, detail if len(detail) < 400 else detail[:400] + "..."))
    else:
        print("ok - %s" % text)


def parse_out(path):
    got = {}
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                got[(parts[0], parts[1])] = parts[2]
    return got


def verify_share(got, name, d):
    def guest(keys_want):
        return ["%s: guest %s" % (k, got.get((name, k), "nothing")[:24]) for k, want in keys_want
                if got.get((name, k)) != want]

    def host(paths_want):
        return ["%s: host %s" % (os.path.basename(p), host_sha(p)[:24]) for p, want in paths_want
                if host_sha(p) != want]

    want = {f: sha(file_data(f)) for f in FILES}
    verdict("%s: read() of %d files of 1 B to 3000001 B: sha256 as on the host" % (name, len(FILES)),
            guest([("read:" + f, want[f]) for f in FILES]))
    verdict("%s: mmap reads of the same files" % name, guest([("mmap:" + f, want[f]) for f in FILES]))
    verdict("%s: dd reads, bs=1 (4097 B), 512 (128 KiB), 4k/64k/1M (3000001 B)" % name,
            guest([("dd%d:%s" % (bs, f), want[f]) for f, bs in DD_READS]))
    copies = [(copy_name(tool, f, bs), f) for tool, f, bs in COPIES]
    verdict("%s: cp and dd (bs 512 to 1M) copies made in the guest: same bytes on the host" % name,
            guest([("copy:" + c, "done") for c, _ in copies]) +
            host([(d + "/w/" + c, want[f]) for c, f in copies]))
    for text, names in WRITE_GROUPS:
        verdict("%s: %s: same bytes on the host" % (name, text),
                guest([("wrote:" + n, "done") for n in names]) +
                host([(d + "/w/" + n, sha(write_expected(n))) for n in names]))
    g = dict(kv.split("=", 1) for kv in got.get((name, "grow"), "").split() if "=" in kv)
    verdict("%s: a file appended on the host while the guest reads it: every read is a prefix of the "
            "final content (%s reads saw %s sizes)" % (name, g.get("reads", "no"), g.get("sizes", "no")),
            [] if g.get("bad") == "0" and g.get("tailbad") == "0" else
            ["guest said: %s" % got.get((name, "grow"), "nothing")])
    final = sha(grow_data())
    verdict("%s: ... and the guest's last read equals the host's file" % name,
            ([] if g.get("final") == final and g.get("tail") == final else
             ["guest said: %s" % got.get((name, "grow"), "nothing")]) + host([(d + "/grow", final)]))
    verdict("%s: the files the guest read are unchanged on the host" % name,
            host([(d + "/r/" + f, want[f]) for f in FILES]))


# --- disks: an image of DISK_SIZE bytes (not a multiple of 4 KiB), read and written by dd -----------
DISK_SIZE = 8 * MiB + 1536
SECTORS = DISK_SIZE // 512
# (key, bs, skip, count or None for all, dd flags): what the guest reads; sha256 of each
DISK_READS = [("buf1M", MiB, 0, None, ""), ("cat", 0, 0, None, ""),
              ("dio1M", MiB, 0, None, "iflag=direct"), ("dio64k", 65536, 17, 40, "iflag=direct"),
              ("dio4k", 4096, 777, 300, "iflag=direct"), ("dio512", 512, 12345, 200, "iflag=direct")]
# (bs, skip, seek, count, flags): copies inside the disk, in this order; offsets in bs units except
# where flags say seek_bytes. Then TEXT at DISK_TEXT_AT through the page cache, one byte at a time.
DISK_WRITES = [(65536, 0, 100, 16, "oflag=direct"),                      # 1 MiB to 6.25 MiB, O_DIRECT
               (512, 100, 12501, 7, "iflag=direct oflag=direct"),        # 7 sectors to an odd sector
               (MiB, 1, 4, 2, ""),                                       # 2 MiB through the page cache
               (4096, 3, 2560512, 2, "oflag=direct,seek_bytes"),         # 8 KiB at a sector that is not 4k-aligned
               (512, 0, SECTORS - 3, 3, "oflag=direct")]                  # the last three sectors
DISK_TEXT, DISK_TEXT_AT = "ringvm-was-here", 1234567


def disk_expected(orig):
    buf = bytearray(orig)
    for bs, skip, seek, count, flags in DISK_WRITES:
        dst = seek if "seek_bytes" in flags else seek * bs
        buf[dst:dst + bs * count] = buf[skip * bs:skip * bs + bs * count]
    buf[DISK_TEXT_AT:DISK_TEXT_AT + len(DISK_TEXT)] = DISK_TEXT.encode()
    return bytes(buf)


def disk_script():
    s = ["sum() { sha256sum | cut -d' ' -f1; }", "for d in /dev/vd?; do", "n=${d#/dev/}",
         'echo "$n size $(cat /sys/block/$n/size)"']
    for key, bs, skip, count, flags in DISK_READS:
        if key == "cat":
            s.append('echo "$n cat $(cat $d | sum)"')
        else:
            cnt = " count=%d" % count if count else ""
            s.append('echo "$n %s $(dd if=$d bs=%d skip=%d%s %s 2>/dev/null | sum)"' % (key, bs, skip, cnt, flags))
    for bs, skip, seek, count, flags in DISK_WRITES:
        s.append("dd if=$d of=$d bs=%d skip=%d seek=%d count=%d conv=notrunc %s 2>/dev/null || echo \"$n write-failed %d\""
                 % (bs, skip, seek, count, flags, seek))
    s.append("printf %s | dd of=$d bs=1 seek=%d conv=notrunc 2>/dev/null || echo \"$n write-failed text\""
             % (DISK_TEXT, DISK_TEXT_AT))
    s += ["sync", 'echo "$n after $(dd if=$d bs=1M iflag=direct 2>/dev/null | sum)"', "done", "echo disks-done"]
    return "\n".join(s) + "\n"


def verify_disks(got, label, disks):
    orig = gen(DISK_SIZE, "disk")
    after = disk_expected(orig)
    for i, (name, img) in enumerate(disks):
        vd = "vd" + "abcdefgh"[i]

        def guest(keys_want):
            return ["%s: guest %s" % (k, got.get((vd, k), "nothing")[:24]) for k, want in keys_want
                    if got.get((vd, k)) != want]
        reads = [("size", str(SECTORS))]
        for key, bs, skip, count, _ in DISK_READS:
            end = skip * bs + count * bs if count else DISK_SIZE
            reads.append((key, sha(orig[skip * bs:end])))
        verdict("%s disk, %s: reads (1M, cat, O_DIRECT 1M/64k/4k/512) equal the image" % (name, label),
                guest(reads))
        fails = [v for (n, k), v in got.items() if n == vd and k == "write-failed"]
        verdict("%s disk, %s: the image on the host holds every guest write (O_DIRECT 64k/512/4k at "
                "an odd sector, 1M buffered, 1-byte writes, the last sectors)" % (name, label),
                ["write failed at %s" % f for f in fails] +
                ([] if host_sha(img) == sha(after) else ["image: host %s" % host_sha(img)[:24]]))
        verdict("%s disk, %s: the guest reads back, O_DIRECT, what the host's image holds" % (name, label),
                guest([("after", sha(after))]))


def main(argv):
    cmd, args = argv[1], argv[2:]
    pairs = [a.split("=", 1) for a in args if "=" in a]
    if cmd == "make-files":
        for sub in ("r", "w"):
            os.makedirs(os.path.join(args[0], sub), exist_ok=True)
        for f in FILES:
            with open(os.path.join(args[0], "r", f), "wb") as fh:
                fh.write(file_data(f))
        open(os.path.join(args[0], "grow"), "wb").close()
    elif cmd == "guest-shares":
        for name, d in pairs:
            guest_share(name, d)
        print("shares-done", flush=True)
    elif cmd == "append":
        host_append(args[0])
    elif cmd == "verify-shares":
        got = parse_out(args[0])
        for name, d in [a.split("=", 1) for a in args[1:]]:
            verify_share(got, name, d)
    elif cmd == "make-image":
        with open(args[0], "wb") as fh:
            fh.write(gen(DISK_SIZE, "disk"))
    elif cmd == "disk-script":
        sys.stdout.write(disk_script())
    elif cmd == "verify-disks":
        verify_disks(parse_out(args[0]), args[1], [a.split("=", 1) for a in args[2:]])
    else:
        sys.exit("fs_backends.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
