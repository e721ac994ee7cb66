/* virtio_fs.h: the virtio-fs device as the machine sees it: its config, create, destroy. */
#ifndef RINGVM_VIRTIO_FS_H
#define RINGVM_VIRTIO_FS_H

#include <stdbool.h>

#include <linux/virtio_fs.h>

#include "devices/fs/fs_server.h"
#include "devices/virtio/uring.h"

#define FS_TAG_MAX 36 /* virtio_fs_config.tag: 36 bytes, no NUL when full (virtio 1.2 5.11.4) */
#define FS_MAX_QUEUES 16 /* request queues (the hiprio queue comes on top) */

/* One share, as the device keeps it: a checked copy of a struct ringvm_share (include/ringvm.h). */
struct fs_config {
	char host_dir[4096];
	char guest_dir[4096];   /* absolute path in the guest, for ringvm.mount= */
	char tag[FS_TAG_MAX + 1]; /* NUL-terminated here */
	bool readonly;
	enum fs_cache cache;
	unsigned int queues;    /* request queues, 1..FS_MAX_QUEUES */
	bool dev;               /* the guest may create device nodes (off: EPERM) */
	bool suid;              /* the guest may set setuid/setgid bits (off: stripped) */
	bool allow_direct_io;   /* the guest's O_DIRECT opens are O_DIRECT on the host (off: dropped) */
	enum fs_xattr_policy xattr; /* default FS_XATTR_USER */
	unsigned int poll_us;   /* queue workers busy-poll up to this long before sleeping (adaptive,
				   devices/virtio/pace.h); 0 = off (the default) */
};

struct ringvm_share;
struct ringvm_root;

/*
 * Check a public share description (paths, ranges, tag characters; no file access: virtio_fs_create()
 * reports a missing directory) and copy it into *out, with the default tag when s->tag is NULL
 * (ringvm.h says which). 0, or -EINVAL with *why a static one-line reason. Two shares with one tag
 * or one guest directory are for the caller to refuse.
 */
__attribute__((warn_unused_result)) int fs_config_from(const struct ringvm_share *s, struct fs_config *out,
						       const char **why);

/* The guest's root: tag "root", guest_dir "/", read-only unless r->writable. Same contract. */
__attribute__((warn_unused_result)) int fs_config_root(const struct ringvm_root *r, struct fs_config *out,
						       const char **why);

struct virtio_fs;
struct virtio_dev;

/*
 * Open the shared directory (-ENOENT/-ENOTDIR/-EACCES when it is not a usable directory), raise
 * RLIMIT_NOFILE to its hard limit and bound the server's fds by it (and the process-wide budget of
 * fs_budget.h too, unless --fs-limits set it), and create the device with
 * 1 hiprio + cfg->queues request queues. The device is not on any bus yet: whoever builds the
 * machine hands virtio_fs_virtio_dev() to a transport (vmm/devices.c: virtio-mmio). Setup time
 * only. Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int virtio_fs_create(const struct fs_config *cfg,
							 struct virtio_fs **out);

/* What a virtio-fs queue's io_uring may do (virtio_fs.c lists the opcodes and why). */
extern const struct uring_rules fs_ring_rules;

/* The device's virtio side, for a transport; valid until virtio_fs_destroy(). */
struct virtio_dev *virtio_fs_virtio_dev(struct virtio_fs *fs);

/*
 * Close every inode and handle, free. Only the backend: the transport that carried the device must
 * already be destroyed (virtio_mmio_destroy() stops the queue workers and drains in-flight I/O), or
 * never have been attached. NULL ok.
 */
void virtio_fs_destroy(struct virtio_fs *fs);

#endif
