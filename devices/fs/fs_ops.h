/* fs_ops.h: what the passthrough server's files share: the reply buffer, attribute and name helpers. */
#ifndef RINGVM_FS_OPS_H
#define RINGVM_FS_OPS_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "devices/fs/fs_server.h"

/* A reply being built: fuse_out_header at buf[0], body after it; len counts both. */
struct fs_out {
	uint8_t *buf;
	size_t cap;
	size_t len;
};

/* Room for n more body bytes, or NULL when the guest's reply buffer is too small (-> ERANGE/EIO). */
static inline void *fs_out_reserve(struct fs_out *o, size_t n)
{
	void *p;

	if (n > o->cap - o->len)
		return NULL;
	p = o->buf + o->len;
	memset(p, 0, n);
	o->len += n;
	return p;
}

/* Append a fixed reply struct; -EIO (never a truncated reply) if it does not fit. */
static inline int fs_out_put(struct fs_out *o, const void *src, size_t n)
{
	void *p = fs_out_reserve(o, n);

	if (!p)
		return -EIO;
	memcpy(p, src, n);
	return 0;
}

/* "/proc/self/fd/N"-relative name of an fd, for openat(s->proc_fd, ...) and path-based calls. */
struct fs_fdname {
	char s[16];
};
void fs_fdname(struct fs_fdname *n, int fd);
/* Absolute "/proc/self/fd/N" path (xattr calls that have no *at form). */
struct fs_fdpath {
	char s[32];
};
void fs_fdpath(struct fs_fdpath *p, int fd);

/* Timeouts for the cache mode. */
void fs_entry_timeout(const struct fs_server *s, uint64_t *sec, uint32_t *nsec);

/* struct stat -> fuse_attr (rdev in the kernel's new_encode_dev form). */
void fs_fill_attr(const struct stat *st, struct fuse_attr *a);

/* stat of an inode through its O_PATH fd, never following a symlink. */
__attribute__((warn_unused_result)) int fs_stat_inode(const struct fsi_inode *ino, struct stat *st);

/*
 * Refuse names the decoder let through that are not a plain entry under a directory: "." and "..".
 * With '/' refused by the decoder, every *at() call on (parent fd, name) stays in the parent.
 */
__attribute__((warn_unused_result)) int fs_check_entry_name(const char *name);

/*
 * The inode number the guest sees for host (dev, ino): index(dev) << FS_INO_BITS | ino, with the
 * share's own file system as index 0, so files of two host file systems that the share spans
 * (mount points inside it) never share a number in the guest's one FUSE file system (hard-link
 * detection, tar, du stay right). Announcing submounts (FUSE_SUBMOUNTS) would do it with a guest
 * superblock per file system, but an overlayfs over the share (--root) refuses such automount
 * points. -EOVERFLOW for an inode number of FS_INO_BITS bits or more, or past FS_MAX_DEVS file
 * systems. Any thread.
 */
#define FS_INO_BITS 48
__attribute__((warn_unused_result)) int fs_map_ino(struct fs_server *s, dev_t dev, uint64_t ino,
						   uint64_t *out);

/* True for the f_type of a pseudo file system (proc, sysfs, tracefs, debugfs, securityfs,
   configfs, bpf, cgroup...): its files are kernel interfaces, never served to the guest. */
bool fs_pseudo_magic(long f_type);

/* -EACCES when ino is on a pseudo file system (only a stub where one is mounted can be looked up:
   it may be stat'ed, never opened, listed, changed or written into), else 0. Costs a statfs only
   for inodes off the share's own file system. */
__attribute__((warn_unused_result)) int fs_pseudo_refuse(const struct fs_server *s,
							 const struct fsi_inode *ino);

/*
 * LOOKUP a single component under parent: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS, O_PATH | O_NOFOLLOW), a final symlink opened as itself, never followed;
 * an inode of the share's file system the table already holds is found by a stat of the name
 * alone (fsi_relearn).
 * Inodes on a pseudo file system are refused (EACCES) but for the stub where one is mounted (it
 * may be stat'ed, not opened); other mount points are crossed, inode numbers kept apart by
 * fs_map_ino (-EOVERFLOW when they cannot be).
 * Fills eo (nlookup + 1 on the inode) or returns -errno. *out, when not NULL, gets the inode with a
 * reference.
 */
__attribute__((warn_unused_result)) int fs_lookup_entry(struct fs_server *s, int parent_fd,
							const char *name,
							struct fuse_entry_out *eo,
							struct fsi_inode **out);
/* The same for a name the request has just made (CREATE, MKDIR, MKNOD, SYMLINK, LINK): no stat
   first, the table has no inode to find by it (LINK's is found by fsi_learn all the same). */
__attribute__((warn_unused_result)) int fs_lookup_made(struct fs_server *s, int parent_fd,
						       const char *name, struct fuse_entry_out *eo,
						       struct fsi_inode **out);

/* Open the inode behind an O_PATH fd with real flags, via /proc/self/fd (no symlink is followed:
   the fd is a regular file or directory, checked by the caller). */
__attribute__((warn_unused_result)) int fs_reopen(struct fs_server *s, const struct fsi_inode *ino,
						  int flags);

/*
 * Opens of regular files use O_NONBLOCK so that a lease or a file that turns out to be a FIFO
 * cannot block the worker in open(); I/O must not inherit it: io_uring then answers EAGAIN instead
 * of waiting on file systems that cannot do non-blocking I/O (9p, NFS, FUSE). Clear it on fd, which
 * was opened with `flags`: F_SETFL takes the status flags as opened (O_APPEND, O_DIRECT,
 * O_NOATIME stay as they are) without a F_GETFL first, one system call.
 */
__attribute__((warn_unused_result)) int fs_clear_nonblock(int fd, int flags);

/*
 * The permission bits a change may give an inode of type `type` (S_IFMT bits): mode & 07777, less
 * setuid and setgid on anything but a directory unless the share allows them (allow_suid). A
 * directory keeps setgid (group inheritance, no privilege); its setuid means nothing on Linux.
 */
static inline mode_t fs_policy_mode(const struct fs_server *s, mode_t type, mode_t mode)
{
	mode &= 07777;
	if (!s->allow_suid && type != S_IFDIR)
		mode &= ~(mode_t)(S_ISUID | S_ISGID);
	return mode;
}

/*
 * What the kernel does on a write or truncate by a caller without CAP_FSETID, which the guest leaves
 * to us (FUSE_HANDLE_KILLPRIV_V2): clear setuid, setgid (with group execute, or without it when
 * the caller's group gid, the request's, is not the file's: Linux's rule for anyone without
 * CAP_FSETID, root included) and security.capability. fd: a real open fd on a regular file; runs
 * with this thread's filesystem capabilities, whoever owns the file.
 */
__attribute__((warn_unused_result)) int fs_kill_priv(int fd, uint32_t gid);

/*
 * The setgid kill that a capable chown leaves out: setgid without group execute, which Linux
 * (since 6.2, and in 6.1.y) also kills when the caller (uid, gid: the request's) is outside the
 * file's group and lacks CAP_FSETID. FUSE tells us only the caller's primary group, so a member
 * through a supplementary group loses the bit as well: the safe way to err (a setgid file others
 * may run must not keep it after a stranger's change). A root caller keeps it. fd: any fd on the
 * inode (O_PATH too); only a regular file is changed.
 */
__attribute__((warn_unused_result)) int fs_kill_sgid_of_stranger(struct fs_server *s, int fd,
								 uint32_t uid, uint32_t gid);

/*
 * FOPEN_* for an open file by cache mode: never = direct I/O (no guest page cache); auto and always
 * keep the page cache across opens (auto relies on FUSE_AUTO_INVAL_DATA to drop it when the host
 * file's mtime or size changed).
 */
static inline uint32_t fs_open_flags(const struct fs_server *s)
{
	return s->cache == FS_CACHE_NEVER ? FOPEN_DIRECT_IO : FOPEN_KEEP_CACHE;
}

/* Session flags helper. */
static inline int fs_has_flag(const struct fs_server *s, uint64_t flag)
{
	return (s->flags & flag) != 0;
}

/* The operations, by file. Each returns 0 with its reply body in o, or -errno. */
int fs_op_getattr(struct fs_server *s, struct fsi_inode *ino, struct fs_out *o);
int fs_op_setattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino, struct fs_out *o);
int fs_op_readlink(struct fsi_inode *ino, struct fs_out *o);
int fs_op_statfs(struct fsi_inode *ino, struct fs_out *o);
int fs_op_access(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino);

int fs_op_mknod(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_mkdir(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_symlink(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_link(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_unlink(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_rmdir(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_rename(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_create(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);
int fs_op_tmpfile(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir, struct fs_out *o);

int fs_op_open(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino, struct fs_out *o);
int fs_op_release(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_flush(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_fsync(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_fallocate(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_lseek(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_copy_file_range(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_read(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_write(struct fs_server *s, const struct fuse_req *r, const void *reqbuf, size_t have,
		struct fs_out *o);

int fs_op_opendir(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino, struct fs_out *o);
int fs_op_readdir(struct fs_server *s, const struct fuse_req *r, bool plus, struct fs_out *o);
int fs_op_releasedir(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);
int fs_op_fsyncdir(struct fs_server *s, const struct fuse_req *r, struct fs_out *o);

int fs_op_getxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino, struct fs_out *o);
int fs_op_listxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino, struct fs_out *o);
int fs_op_setxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino, struct fs_out *o);
int fs_op_removexattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino, struct fs_out *o);

/*
 * The flags of a guest OPEN/CREATE that the host open may carry: never creation (CREATE's job, done
 * its own way), O_PATH, O_TMPFILE, O_DIRECTORY or O_NOCTTY; O_DIRECT only where the share allows it
 * (like virtiofsd's allow_direct_io: without it the guest's O_DIRECT is a guest page-cache matter and
 * the host page cache serves the I/O). O_NONBLOCK is added by the callers for the open itself.
 */
static inline int fs_open_host_flags(const struct fs_server *s, uint32_t guest_flags)
{
	uint32_t drop = O_CREAT | O_EXCL | O_NOCTTY | O_PATH | O_TMPFILE | O_DIRECTORY;

	if (!s->allow_direct_io)
		drop |= O_DIRECT;
	return (int)(guest_flags & ~drop);
}

/* How a file on device dev opened with host flags `flags` is read and written (fs_server.root_local). */
static inline enum fsh_kind fs_file_kind(const struct fs_server *s, dev_t dev, int flags)
{
	if (!s->root_local || dev != s->root_dev)
		return FSH_FILE;
	return flags & (O_DIRECT | O_SYNC | O_DSYNC) ? FSH_FILE_LOCAL_DIRECT : FSH_FILE_LOCAL;
}

/* Per-request credentials (fs_creds.c): act as the request's uid/gid when root, with CAP_FSETID. */
__attribute__((warn_unused_result)) int fs_creds_enter(struct fs_server *s, uint32_t uid, uint32_t gid);

/* CAP_FSETID back in this thread's effective set if a write dropped it (any identity kept). */
__attribute__((warn_unused_result)) int fs_creds_fsetid_keep(struct fs_server *s);

/*
 * Before a WRITE by uid:gid made now by a system call of this thread; kill: the writer lacks
 * CAP_FSETID (FUSE_WRITE_KILL_SUIDGID). Returns FS_CREDS_KERNEL_KILLS when the thread now acts as
 * uid:gid without CAP_FSETID, so the host kernel kills inside the write; 0 when the caller must
 * kill by hand (not root, or writes of this thread queued on its ring); or -errno.
 */
#define FS_CREDS_KERNEL_KILLS 1
__attribute__((warn_unused_result)) int fs_creds_write_here(struct fs_server *s, uint32_t uid,
							    uint32_t gid, bool kill);

#endif
