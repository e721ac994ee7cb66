/* jail.h: ringvm run --jail: the VMM in namespaces of its own, seeing only its kernel, initrd, disks, shares. */
#ifndef RINGVM_JAIL_H
#define RINGVM_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "include/ringvm.h"

/*
 * Like Firecracker's jailer, built in. The caller (root) forks (a clone with CLONE_NEWPID); the
 * child, PID 1 of the new PID namespace, goes on to run the VM in
 *
 *   - a new mount namespace whose root is an empty read-only tmpfs holding, at the paths the command
 *     line names them by, bind mounts of the kernel, the initrd, every disk and every share (disks
 *     and shares read-only where they are; nosuid, nodev, noexec), a /dev with a kvm node of its
 *     own (owned by --uid/--gid, as the jailer does) and null, a /proc of the new PID namespace
 *     (the virtio-fs server reopens files through /proc/self/fd) and, where it exists,
 *     /sys/module/kvm_pvm (ringvm's PVM check): pivot_root into it, the old root detached;
 *   - new IPC, UTS (hostname "ringvm") and network (loopback only, down) namespaces;
 *   - every inherited fd but 0, 1 and 2 closed; RLIMIT_CORE 0 (no core file holding guest memory);
 *   - with uid/gid given: supplementary groups dropped, then gid and uid (real, effective, saved),
 *     so a user with no right to /dev/kvm, the host's files or any capability runs the VM.
 *
 * The parent stays outside with its stdout on /dev/null (a reader of the command's stdout must see
 * EOF when the command closes it, not when ringvm ends). It forwards SIGINT, SIGTERM and SIGHUP to
 * the child and ends with the child's exit status (128 + N when signal N killed it), then removes
 * the jail's empty mount point.
 */
struct jail_options {
	bool drop_ids; /* set uid and gid below */
	uid_t uid;
	gid_t gid;
};

/*
 * Enter the jail for cfg (its kernel, initrd, disks, shares, --root). Returns 0 in the jailed child
 * (which goes on to ringvm_create), 1 in the parent once the child ended (*status: what the parent
 * must exit with), or -errno with a one-line reason in err (nothing changed in the caller, or the
 * child could not be made). Not root: -EPERM. Call before anything else opens files or makes
 * threads.
 */
__attribute__((warn_unused_result)) int jail_enter(const struct ringvm_config *cfg,
						   const struct jail_options *o, int *status, char *err,
						   size_t errlen);

#endif
