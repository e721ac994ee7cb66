#!/usr/bin/python3
"""qmp-virtio.py SOCKET: through QEMU's QMP socket, one line per virtqueue of every virtio device:
the driver's avail idx and flags and the device's used idx and flags as they are in guest memory now,
and the negotiated features. Said when a guest stood still: whether requests wait in an avail ring
(the back-end did not take them: a lost kick or a stuck back-end), replies wait in a used ring (the
driver did not see them: a lost interrupt), or neither (the guest itself stopped asking)."""
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
            print("qmp:   queue %d: avail idx %s flags %s; used idx %s flags %s; next element %s" % (
                q, e["avail"]["idx"], e["avail"]["flags"], e["used"]["idx"], e["used"]["flags"],
                e.get("index")))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except (OSError, ValueError, KeyError) as err:
        print("qmp: %s" % err)
        sys.exit(1)
