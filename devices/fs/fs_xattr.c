/* fs_xattr.c: extended attributes, through the inode's /proc/self/fd link (no open, no device I/O). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <linux/limits.h>
#include <unistd.h>

#include "devices/fs/fs_ops.h"

/*
 * An O_PATH fd cannot be given to f*xattr(), and opening the inode could block on a FIFO or act on
 * a device, so the calls take the path "/proc/self/fd/N" and follow it: following that magic link
 * lands on the inode the fd holds and ends there, a symlink included (it is not followed further),
 * so trusted.* and security.* work on symlinks as on the host, and the host kernel refuses user.*
 * there itself.
 */
/* GETXATTR and LISTXATTR share the reply rule: size 0 asks for the length, else the bytes. */
static int fs_xattr_reply(struct fs_out *o, uint32_t size, ssize_t (*call)(const char *, const char *,
									    void *, size_t),
			  const char *path, const char *name)
{
	struct fuse_getxattr_out go = { 0 };
	ssize_t n;
	void *p;

	if (size == 0) {
		n = call(path, name, NULL, 0);
		if (n < 0)
			return -errno;
		go.size = (uint32_t)n;
		return fs_out_put(o, &go, sizeof(go));
	}
	if (size > XATTR_SIZE_MAX)
		size = XATTR_SIZE_MAX;
	if (size > o->cap - o->len)
		return -ERANGE;
	p = fs_out_reserve(o, size);
	n = call(path, name, p, size);
	if (n < 0) {
		o->len -= size;
		return -errno;
	}
	o->len -= size - (size_t)n;
	return 0;
}

static ssize_t fs_get(const char *path, const char *name, void *buf, size_t size)
{
	return getxattr(path, name, buf, size);
}

static ssize_t fs_list(const char *path, const char *name, void *buf, size_t size)
{
	(void)name;
	return listxattr(path, buf, size);
}

int fs_op_getxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		   struct fs_out *o)
{
	struct fs_fdpath p;
	int err;

	fs_fdpath(&p, ino->fd);
	err = fs_xattr_reply(o, r->in.getxattr.size, fs_get, p.s, r->name);
	/* An inode on a file system without ACLs (a submount) has none: with FUSE_POSIX_ACL the
	   guest would take EOPNOTSUPP as a failed permission check. */
	if (err == -EOPNOTSUPP && !strncmp(r->name, "system.posix_acl_", 17))
		err = -ENODATA;
	return err;
}

int fs_op_listxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		    struct fs_out *o)
{
	struct fs_fdpath p;

	fs_fdpath(&p, ino->fd);
	return fs_xattr_reply(o, r->in.getxattr.size, fs_list, p.s, NULL);
}

int fs_op_setxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		   struct fs_out *o)
{
	struct fs_fdpath p;

	if (s->readonly)
		return -EROFS;
	fs_fdpath(&p, ino->fd);
	if (r->in.setxattr.flags & ~(uint32_t)(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	if (setxattr(p.s, r->name, r->data, r->data_len, (int)r->in.setxattr.flags) < 0)
		return -errno;
	if (r->in.setxattr.setxattr_flags & FUSE_SETXATTR_ACL_KILL_SGID) {
		/* The guest set an access ACL as someone outside the file's group (7.37). */
		struct stat st;
		struct fs_fdname n;

		if (fs_stat_inode(ino, &st) == 0 && (st.st_mode & S_ISGID)) {
			fs_fdname(&n, ino->fd);
			if (fchmodat(s->proc_fd, n.s, st.st_mode & 07777 & ~(mode_t)S_ISGID, 0) < 0)
				return -errno;
		}
	}
	return 0;
}

int fs_op_removexattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		      struct fs_out *o)
{
	struct fs_fdpath p;

	if (s->readonly)
		return -EROFS;
	fs_fdpath(&p, ino->fd);
	return removexattr(p.s, r->name) < 0 ? -errno : 0;
}
