/* fs_server.h: the FUSE passthrough server over one host directory, independent of virtio. */
#ifndef RINGVM_FS_SERVER_H
#define RINGVM_FS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/fs/fuse_decode.h"
#include "devices/fs/handle.h"
#include "devices/fs/inode.h"

/* Cache modes, like virtiofsd's. */
enum fs_cache {
	FS_CACHE_AUTO = 0, /* 1 s entry/attr timeouts; page cache kept while mtime/size are unchanged */
	FS_CACHE_ALWAYS,   /* long timeouts, page cache always kept, symlinks cached */
	FS_CACHE_NEVER,    /* no timeouts, direct I/O: every access reaches the host */
};

/*
 * Which extended attributes the guest may see and change (--share ...,xattr=). The names the
 * guest sends are checked against this before any host call; listings are filtered the same way.
 */
enum fs_xattr_policy {
	FS_XATTR_USER = 0,  /* default: user.* and the POSIX ACLs (system.posix_acl_access/default) */
	FS_XATTR_NONE,      /* no extended attributes at all (EOPNOTSUPP) */
	FS_XATTR_SECURITY,  /* user + security.* (SELinux labels, file capabilities): set by guest root only */
	FS_XATTR_ALL,       /* every namespace; trusted.* and security.* set by guest root only */
};

/* File systems one share may span (mount points inside it): 2^15 - 1 fit the inode mapping. */
#define FS_MAX_DEVS 256

/* Largest WRITE/READ we negotiate (max_write, max_pages): 1 MiB, like virtiofsd. */
#define FS_MAX_IO (1u << 20)

/*
 * One shared directory. Built by fs_server_create (device setup), used concurrently by every queue
 * worker through fs_dispatch / fs_io_*; requests of different queues run in parallel. Mutable state
 * lives in the inode and handle tables (their own locks) and in the negotiated session below
 * (written once by INIT under init_lock, read after an acquire load of `initialized`).
 */
struct fs_server {
	struct fsi_table inodes;
	struct fsh_table handles;
	int proc_fd;     /* O_PATH on /proc/self/fd: reopening an O_PATH fd with real access modes */
	dev_t root_dev;  /* st_dev of the shared directory: other values are submounts */
	/* Host file systems seen in the share, by index: inode numbers reach the guest as
	   index << 48 | st_ino (fs_map_ino); index 0 is root_dev. Appended under dev_lock. */
	pthread_mutex_t dev_lock;
	dev_t devs[FS_MAX_DEVS];
	unsigned int nr_devs; /* atomic for readers */
	/*
	 * The root's file system is local storage (xfer_local_magic: ext4, XFS, btrfs, F2FS, tmpfs),
	 * where a transfer waits on a local device at most, so some are made on the queue's own
	 * thread (fs_file_kind):
	 *   - buffered WRITEs, always: io_uring cannot start one without blocking on ext4 or tmpfs
	 *     (no buffered NOWAIT there) and hands every one to its io-wq thread pool, a handoff that
	 *     cost more than the write (4 KiB random writes at depth 1 natively: 52k -> 67k IOPS);
	 *   - O_DIRECT (and O_SYNC) READs and WRITEs while the queue holds no other request
	 *     (vq_worker_alone): one preadv2 there took 53 us where io_uring's round trip took 74
	 *     (4 KiB reads at depth 1, natively), and with company io_uring keeps them in parallel.
	 * Everything on other file systems (NFS, FUSE, 9p, other submounts) stays on io_uring, where
	 * a stop can cancel or abandon it.
	 */
	bool root_local;
	bool readonly;   /* every change answers EROFS */
	bool as_root;    /* we are root: act with each request's uid/gid (setfsuid/setfsgid) */
	enum fs_cache cache;
	/* What the share allows beyond plain files (--share ...,dev,suid,xattr=); off by default. Set
	   by the creator before the first request, immutable after. */
	bool allow_dev;  /* MKNOD of character and block devices (else EPERM) */
	bool allow_suid; /* setuid/setgid bits on MKNOD/MKDIR/CREATE/SETATTR (else stripped) */
	bool allow_direct_io; /* a guest O_DIRECT open is O_DIRECT on the host (else dropped) */
	enum fs_xattr_policy xattr;

	pthread_mutex_t init_lock;
	int initialized; /* atomic: 0 until INIT was answered */
	struct fuse_decode_ctx ctx;
	uint64_t flags;  /* FUSE_* INIT flags both sides agreed */
};

/*
 * Open host_dir (must be a directory, not on a pseudo file system: -EACCES) and set up the tables.
 * The share's policy fields (allow_dev, allow_suid, xattr) start off/FS_XATTR_USER. max_fds bounds inodes + handles (each
 * half). Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int fs_server_create(struct fs_server *s, const char *host_dir,
							 bool readonly, enum fs_cache cache,
							 size_t max_fds);
void fs_server_destroy(struct fs_server *s);

/*
 * Forget the session: every nodeid but the root, every open handle, the negotiated INIT. For
 * DESTROY (the guest unmounted) and a device reset (the guest will INIT again). Any thread; requests
 * still running finish on the inodes and handles they hold.
 */
void fs_server_reset(struct fs_server *s);

/* Decoding context for the next request: the negotiated minor once INIT ran. Any thread. */
void fs_server_decode_ctx(struct fs_server *s, struct fuse_decode_ctx *ctx);

/*
 * Serve one decoded request synchronously, writing the whole reply (fuse_out_header + body) into
 * out[0 .. cap). Returns the reply length, or 0 when the opcode takes no reply (FORGET,
 * BATCH_FORGET, INTERRUPT). READ and WRITE are served with pread/pwrite on the gathered bytes (the
 * device uses fs_io_begin instead, to read and write guest memory directly); a WRITE whose payload
 * was not gathered (have < total) answers EIO. cap must be at least sizeof(struct fuse_out_header).
 * Caller: any queue worker; runs on the caller's thread with the request's credentials.
 */
size_t fs_dispatch(struct fs_server *s, const struct fuse_req *r, const void *reqbuf, size_t have,
		   void *out, size_t cap);

/* An error reply (header only) for request `unique`; returns its length. */
size_t fs_reply_error(void *out, uint64_t unique, int err);

/*
 * The data path, for callers that move the bytes themselves (io_uring on guest memory):
 * fs_io_begin checks READ/WRITE (handle, session, readonly, size <= FS_MAX_IO) and returns the
 * open handle with a reference in *h; for a WRITE the caller then calls fs_write_prepare. The
 * caller does the I/O on (*h)->fd at the request's offset, then fs_io_end(h). Returns 0 or -errno
 * (the reply's error). Any thread.
 */
__attribute__((warn_unused_result)) int fs_io_begin(struct fs_server *s, const struct fuse_req *r,
						    struct fsh_handle **h);
void fs_io_end(struct fs_server *s, struct fsh_handle *h);

/*
 * Before a WRITE's bytes move: its kill of setuid/setgid (FUSE_WRITE_KILL_SUIDGID), and this
 * thread's CAP_FSETID as the write needs it (fs_creds.c says why). here: the write is made now by
 * a system call of this thread; otherwise it is queued on this thread's io_uring, and the caller
 * calls fs_write_queued() once its SQE is queued and fs_write_ended() when the request ends.
 * Returns 0 or -errno (the reply's error). Caller: the thread that makes or queues the write.
 */
__attribute__((warn_unused_result)) int fs_write_prepare(struct fs_server *s, const struct fuse_req *r,
							 const struct fsh_handle *h, bool here);
void fs_write_queued(void);
void fs_write_ended(void);

/* Per-thread setup for a worker: own umask (0) and cwd (unshare CLONE_FS), no supplementary groups
   when root. The virtio-fs queue workers run it when they are created, before their seccomp filter
   (which denies unshare and setgroups); fs_dispatch and fs_io_begin call it too (a no-op once done),
   for threads that serve the FUSE protocol directly (tests, the host FUSE mount tool). */
__attribute__((warn_unused_result)) int fs_thread_prepare(struct fs_server *s);

#endif
