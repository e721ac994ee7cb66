/* fs_xattr.c: extended attributes, through the inode's /proc/self/fd link (no open, no device I/O). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
static int fs_xattr_path(const struct fs_server *s, struct fsi_inode *ino, struct fs_fdpath *p)
{
	if (fs_pseudo_refuse(s, ino))
		return -EACCES;
	fs_fdpath(p, ino->fd);
	return 0;
}

static bool fs_xattr_prefix(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/*
 * The share's xattr policy (enum fs_xattr_policy) for one name: 0 when the guest may use it, else
 * the error. trusted.* (overlayfs, ...) and security.* (file capabilities, LSM labels) change what
 * the host grants, so they pass only where the share says so, and are set or removed only by guest
 * root, whatever uid the request carries otherwise. A name outside the policy does not exist for
 * reading (ENODATA) and cannot be set (EOPNOTSUPP, which cp -a and tar take as "not supported here").
 */
static int fs_xattr_allowed(const struct fs_server *s, const char *name, bool write, uint32_t uid)
{
	bool priv = fs_xattr_prefix(name, "trusted.") || fs_xattr_prefix(name, "security.");
	bool ok;

	switch (s->xattr) {
	case FS_XATTR_NONE:
		return -EOPNOTSUPP;
	case FS_XATTR_ALL:
		ok = true;
		break;
	case FS_XATTR_SECURITY:
		ok = fs_xattr_prefix(name, "security.");
		break;
	default:
		ok = false;
		break;
	}
	ok = ok || fs_xattr_prefix(name, "user.") || !strcmp(name, "system.posix_acl_access") ||
	     !strcmp(name, "system.posix_acl_default");
	if (!ok)
		return write ? -EOPNOTSUPP : -ENODATA;
	if (write && priv && uid != 0)
		return -EPERM;
	return 0;
}

/* Drop the names the policy hides from a listing list[0 .. len); returns the new length. */
static size_t fs_xattr_filter(const struct fs_server *s, char *list, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		size_t n = strnlen(list + in, len - in);

		if (in + n < len && fs_xattr_allowed(s, list + in, false, 0) == 0) {
			memmove(list + out, list + in, n + 1);
			out += n + 1;
		}
		in += n + 1;
	}
	return out;
}

/* GETXATTR's reply rule: size 0 asks for the length, else the bytes. */
static int fs_xattr_reply(struct fs_out *o, uint32_t size, const char *path, const char *name)
{
	struct fuse_getxattr_out go = { 0 };
	ssize_t n;
	void *p;

	if (size == 0) {
		n = getxattr(path, name, NULL, 0);
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
	n = getxattr(path, name, p, size);
	if (n < 0) {
		o->len -= size;
		return -errno;
	}
	o->len -= size - (size_t)n;
	return 0;
}

int fs_op_getxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		   struct fs_out *o)
{
	struct fs_fdpath p;
	int err = fs_xattr_allowed(s, r->name, false, r->hdr.uid);

	if (!err)
		err = fs_xattr_path(s, ino, &p);
	if (!err)
		err = fs_xattr_reply(o, r->in.getxattr.size, p.s, r->name);
	/* A name the policy hides does not exist; so do the ACLs of an inode on a file system
	   without them (a submount): with FUSE_POSIX_ACL the guest would take EOPNOTSUPP as a
	   failed permission check. */
	if (err == -EOPNOTSUPP && (s->xattr == FS_XATTR_NONE || !strncmp(r->name, "system.posix_acl_", 17)))
		err = -ENODATA;
	return err;
}

int fs_op_listxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		    struct fs_out *o)
{
	struct fuse_getxattr_out go = { 0 };
	uint32_t size = r->in.getxattr.size;
	struct fs_fdpath p;
	ssize_t n;
	char *list;
	int err = fs_xattr_path(s, ino, &p);

	if (s->xattr == FS_XATTR_NONE)
		return size ? 0 : fs_out_put(o, &go, sizeof(go)); /* an empty list */
	if (err)
		return err;
	/* The host's whole list, filtered by the policy, then measured or sent. */
	list = malloc(XATTR_LIST_MAX);
	if (!list)
		return -ENOMEM;
	n = listxattr(p.s, list, XATTR_LIST_MAX);
	if (n < 0) {
		free(list);
		return -errno;
	}
	n = (ssize_t)fs_xattr_filter(s, list, (size_t)n);
	if (size == 0) {
		go.size = (uint32_t)n;
		err = fs_out_put(o, &go, sizeof(go));
	} else if ((size_t)n > size || (size_t)n > o->cap - o->len) {
		err = -ERANGE;
	} else {
		memcpy(fs_out_reserve(o, (size_t)n), list, (size_t)n);
	}
	free(list);
	return err;
}

int fs_op_setxattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		   struct fs_out *o)
{
	struct fs_fdpath p;
	int err;

	if (s->readonly)
		return -EROFS;
	err = fs_xattr_allowed(s, r->name, true, r->hdr.uid);
	if (!err)
		err = fs_xattr_path(s, ino, &p);
	if (err)
		return err;
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
	int err;

	if (s->readonly)
		return -EROFS;
	err = fs_xattr_allowed(s, r->name, true, r->hdr.uid);
	if (!err)
		err = fs_xattr_path(s, ino, &p);
	if (err)
		return err;
	return removexattr(p.s, r->name) < 0 ? -errno : 0;
}
