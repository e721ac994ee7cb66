/* fs.h: the filesystems guest PID 1 mounts, at boot and on request (guest/protocol.h). */
#ifndef RINGVM_GUEST_FS_H
#define RINGVM_GUEST_FS_H

/*
 * Called by main() only, in this order. A failure of the first two is reported on the console and
 * not fatal (the command may not need that filesystem); one that is already mounted is left alone.
 */

/* /proc, first: it holds the command line. */
void fs_mount_proc(void);

/* /sys, /dev (devtmpfs) with /dev/pts and /dev/shm, /run, /tmp, and /dev/fd, /dev/std{in,out,err}. */
void fs_mount_boot(void);

/*
 * After the modules are loaded: root_value is the text after ringvm.root=, shares_value after
 * ringvm.mount= (NULL when absent; both are decoded in place). Both are parsed before anything is
 * mounted; then the root switch, then each share in order. Returns 0, or -errno after saying what
 * went wrong; the boot cannot go on then (PID 1 may be half-way into the new root).
 */
int fs_root_and_shares(char *root_value, char *shares_value) __attribute__((warn_unused_result));

#endif
