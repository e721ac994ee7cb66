/* privilege.h: the capabilities ringvm keeps once the guest runs, and dropping all the others. */
#ifndef RINGVM_PRIVILEGE_H
#define RINGVM_PRIVILEGE_H

#include <stdbool.h>
#include <stdint.h>

/* What the machine's shares need from the host kernel (all false: no share). */
struct priv_need {
	bool share;          /* at least one virtio-fs share */
	bool share_writable; /* one of them is writable */
	bool share_dev;      /* one of them allows device nodes (,dev) */
};

/*
 * The capabilities (bit N = CAP number N) that the virtio-fs server, running as root, needs to act
 * as the guest's caller on a share, and nothing else: KVM, the console and virtio-blk need none
 * once their files are open.
 *   any share:      CAP_DAC_OVERRIDE (guest root reads and searches what host root may),
 *                   CAP_SETUID, CAP_SETGID (setfsuid/setfsgid per request, setgroups per worker)
 *   writable share: CAP_CHOWN, CAP_FOWNER (chmod, utimes, xattrs of others' files by guest root),
 *                   CAP_FSETID (guest root keeps setuid/setgid on write; setgid of any group),
 *                   CAP_SETFCAP (killpriv: remove security.capability on a write)
 *   ,dev share:     CAP_MKNOD
 * Never CAP_DAC_READ_SEARCH (open_by_handle_at), CAP_SYS_ADMIN (trusted.*, mounts),
 * CAP_SYS_RESOURCE, CAP_SYS_PTRACE, CAP_SYS_RAWIO... Pure.
 */
uint64_t priv_keep_mask(const struct priv_need *need);

/*
 * Drop every capability not in keep from the calling thread's effective, permitted and bounding
 * sets, clear its inheritable and ambient sets, and set no_new_privs. Capabilities are per thread:
 * call it before the process starts any thread (threads created later inherit the result; io_uring
 * workers take their creator's). Uses libcap-ng (it orders the bounding-set drop before giving up
 * CAP_SETPCAP, and knows the ambient set). Without CAP_SETPCAP (not root) the bounding set is
 * left alone: the process holds nothing to raise from it. Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int priv_drop(uint64_t keep);

#endif
