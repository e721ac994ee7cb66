/* virtio_fs.h: the virtio-fs device as the CLI sees it: --share/--root parsing, create, destroy. */
#ifndef RINGVM_VIRTIO_FS_H
#define RINGVM_VIRTIO_FS_H

#include <stdbool.h>

#include <linux/virtio_fs.h>

#include "devices/fs/fs_server.h"

#define FS_TAG_MAX 36 /* virtio_fs_config.tag: 36 bytes, no NUL when full (virtio 1.2 5.11.4) */
#define FS_MAX_QUEUES 16 /* request queues (the hiprio queue comes on top) */

/*
 * One --share HOSTDIR:GUESTDIR[,readonly][,cache=auto|always|never][,tag=NAME][,queues=N][,dev]
 * [,suid][,xattr=user|none|security|all].
 */
struct fs_config {
	char host_dir[4096];
	char guest_dir[4096];   /* absolute path in the guest, for ringvm.mount= */
	char tag[FS_TAG_MAX + 1]; /* NUL-terminated here; default derived from guest_dir */
	bool readonly;
	enum fs_cache cache;
	unsigned int queues;    /* request queues, 1..FS_MAX_QUEUES (default 1) */
	bool dev;               /* the guest may create device nodes (off: EPERM) */
	bool suid;              /* the guest may set setuid/setgid bits (off: stripped) */
	bool allow_direct_io;   /* the guest's O_DIRECT opens are O_DIRECT on the host (off: dropped) */
	enum fs_xattr_policy xattr; /* default FS_XATTR_USER */
	unsigned int poll_us;   /* queue workers busy-poll up to this long before sleeping (adaptive,
				   devices/virtio/pace.h); 0 = off (the default) */
};

/*
 * Parse a --share value. Returns 0, or -EINVAL with *err set to a static one-line reason
 * ("expected HOSTDIR:GUESTDIR", "cache= must be auto, always or never", ...). Does not touch the
 * file system: virtio_fs_create() reports a missing directory. The default tag is GUESTDIR without
 * its leading '/', other '/' turned into '_' ("root" for "/"), cut to 36 bytes; the CLI must refuse
 * two shares with one tag.
 */
__attribute__((warn_unused_result)) int fs_parse_spec(const char *spec, struct fs_config *out,
						      const char **err);

/* --root HOSTDIR[,rw]: the guest's root over virtio-fs, tag "root", guest_dir "/", read-only unless
   ",rw" (the guest keeps writes in a tmpfs overlay then). Same contract as fs_parse_spec. */
__attribute__((warn_unused_result)) int fs_parse_root(const char *spec, struct fs_config *out,
						      const char **err);

/*
 * --fs-limits fds=N,dir_buffers=N: the budget all shares draw on (fs_budget.h); either may be left
 * out. N is 1..2^30. Returns 0, or -EINVAL with *err set to a static one-line reason.
 */
struct fs_limits;
__attribute__((warn_unused_result)) int fs_parse_limits(const char *spec, struct fs_limits *out,
							const char **err);

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

/* The device's virtio side, for a transport; valid until virtio_fs_destroy(). */
struct virtio_dev *virtio_fs_virtio_dev(struct virtio_fs *fs);

/*
 * Close every inode and handle, free. Only the backend: the transport that carried the device must
 * already be destroyed (virtio_mmio_destroy() stops the queue workers and drains in-flight I/O), or
 * never have been attached. NULL ok.
 */
void virtio_fs_destroy(struct virtio_fs *fs);

#endif
