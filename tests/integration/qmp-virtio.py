#!/usr/bin/python3
"""qmp-virtio.py SOCKET: through QEMU's QMP socket, one line per virtqueue of every virtio device:
the driver's avail idx and flags and the device's used idx and flags as they are in guest memory now,
and the negotiated features. Said when a guest stood still: whether requests wait in an avail ring
(the back-end did not take them: a lost kick or a stuck back-end), replies wait in a used ring (the
driver did not see them: a lost interrupt), or neither (the guest itself stopped asking).
The last line is the verdict: "qmp: verdict: balanced" when every ring's avail idx equals its used
idx and every driver's used_event has caught up with its used idx (no request left with a back-end,
no reply the driver did not see), else "qmp: verdict: unbalanced: " and the queues that are not."""
import json
import socket
import sys


def main(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(path)
    f = s.makefile("rw")
    json.loads(f.readline())  # the greeting

    def qmp(cmd, **args):
        f.write(json.dumps({"execute": cmd, "arguments": args}) + "\n")
        f.flush()
        while True:
            r = json.loads(f.readline())
            if "return" in r or "error" in r:
                return r

    qmp("qmp_capabilities")
    devs = qmp("x-query-virtio").get("return", [])
    left = []  # the queues a request or a reply waits in
    for d in devs:
        st = qmp("x-query-virtio-status", path=d["path"]).get("return", {})
        feats = st.get("guest-features", {})
        ring = ",".join(x.split(":")[0] for x in feats.get("transports", []) if "EVENT_IDX" in x or "INDIRECT" in x)
        print("qmp: %s %s status=%s broken=%s features=%s vqs=%s" % (
            d["path"], d["name"], st.get("status", {}).get("statuses", "?"), st.get("broken"), ring,
            st.get("num-vqs")))
        for q in range(st.get("num-vqs", 0)):
            e = qmp("x-query-virtio-queue-element", path=d["path"], queue=q)
            if "error" in e:
                print("qmp:   queue %d: %s" % (q, e["error"].get("desc")))
                continue
            e = e["return"]
            used_event, words = event_words(qmp, d["path"], q)
            print("qmp:   queue %d: avail idx %s flags %s; used idx %s flags %s; next element %s%s" % (
                q, e["avail"]["idx"], e["avail"]["flags"], e["used"]["idx"], e["used"]["flags"],
                e.get("index"), words))
            avail, used = e["avail"]["idx"], e["used"]["idx"]
            if avail != used:
                left.append("%s queue %d: %d requests with the back-end" % (d["name"], q, (avail - used) & 0xffff))
            elif used_event is not None and used_event != used:
                left.append("%s queue %d: used_event %d behind used idx %d" % (d["name"], q, used_event, used))
        print("qmp:   isr %s" % st.get("isr"))
    # Interrupts the local APICs hold (IRR: requested, not yet taken; ISR: in service) and their timers.
    for cpu in range(8):
        r = qmp("human-monitor-command", **{"command-line": "info lapic %d" % cpu})
        text = r.get("return", "")
        if not text or "Invalid" in text or "error" in r:
            break
        for line in text.splitlines():
            if line.startswith(("dumping", "LVT0", "LVTT", "Timer", "ISR", "IRR", "SPIV", "PPR")) or "TSCDL" in line:
                print("qmp: cpu %d %s" % (cpu, line.strip()))
    if not devs:
        print("qmp: verdict: no virtio device answered")
    elif left:
        print("qmp: verdict: unbalanced: " + "; ".join(left))
    else:
        print("qmp: verdict: balanced")
    return 0


def event_words(qmp, path, q):
    """The driver's used_event (a number, None when unread) and, as text, it and the device's
    avail_event (2.7.10), read from guest memory."""
    v = qmp("x-query-virtio-vhost-queue-status", path=path, queue=q).get("return")
    if not v:
        return None, ""
    num = v.get("num", 0)

    def word(gpa):
        r = qmp("human-monitor-command", **{"command-line": "xp /1hx 0x%x" % gpa}).get("return", "")
        return r.split(":")[-1].strip() if ":" in r else "?"

    used_event = word(v["avail-phys"] + 4 + 2 * num)
    try:
        number = int(used_event, 16)
    except ValueError:
        number = None
    return number, "; used_event %s avail_event %s" % (used_event, word(v["used-phys"] + 4 + 8 * num))


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except (OSError, ValueError, KeyError) as err:
        print("qmp: %s" % err)
        sys.exit(1)
