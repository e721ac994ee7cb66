/* fs_attr.c: inode attributes: GETATTR, SETATTR (mode, owner, size, times), READLINK, STATFS, ACCESS. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "devices/fs/fs_ops.h"

/* The SETATTR bits that name an attribute to change (FATTR_FH, FATTR_LOCKOWNER and
   FATTR_KILL_SUIDGID only qualify a change). */
#define FS_SETATTR_ANY                                                                             \
	(FATTR_MODE | FATTR_UID | FATTR_GID | FATTR_SIZE | FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | \
	 FATTR_MTIME_NOW | FATTR_CTIME)

static int fs_attr_reply(struct fs_server *s, const struct stat *st, struct fs_out *o)
{
	struct fuse_attr_out ao = { 0 };
	int err;

	fs_entry_timeout(s, &ao.attr_valid, &ao.attr_valid_nsec);
	fs_fill_attr(st, &ao.attr);
	err = fs_map_ino(s, st->st_dev, st->st_ino, &ao.attr.ino);
	return err ? err : fs_out_put(o, &ao, sizeof(ao));
}

int fs_op_getattr(struct fs_server *s, struct fsi_inode *ino, struct fs_out *o)
{
	struct stat st;
	int err = fs_stat_inode(ino, &st);

	return err ? err : fs_attr_reply(s, &st, o);
}

static int fs_setattr_times(struct fs_server *s, const struct fuse_setattr_in *in,
			    struct fsi_inode *ino, int fd)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
	struct fs_fdname n;

	if (in->valid & FATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (in->valid & FATTR_ATIME)
		ts[0] = (struct timespec){ .tv_sec = (time_t)in->atime, .tv_nsec = in->atimensec };
	if (in->valid & FATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (in->valid & FATTR_MTIME)
		ts[1] = (struct timespec){ .tv_sec = (time_t)in->mtime, .tv_nsec = in->mtimensec };
	if (ts[0].tv_nsec >= 1000000000L && ts[0].tv_nsec != UTIME_NOW && ts[0].tv_nsec != UTIME_OMIT)
		return -EINVAL;
	if (ts[1].tv_nsec >= 1000000000L && ts[1].tv_nsec != UTIME_NOW && ts[1].tv_nsec != UTIME_OMIT)
		return -EINVAL;
	if (fd >= 0)
		return futimens(fd, ts) < 0 ? -errno : 0;
	if (ino->type == S_IFLNK)
		/* No way to reach a symlink itself by fd without its parent; utimes on links is rare. */
		return utimensat(ino->fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	fs_fdname(&n, ino->fd);
	return utimensat(s->proc_fd, n.s, ts, 0) < 0 ? -errno : 0;
}

int fs_op_setattr(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
			 struct fs_out *o)
{
	const struct fuse_setattr_in *in = &r->in.setattr;
	struct fsh_handle *h = NULL;
	struct fs_fdname n;
	struct stat st;
	int err = 0, fd = -1, tmp_fd = -1;

	if (s->readonly)
		return -EROFS;
	if (fs_pseudo_refuse(s, ino))
		return -EACCES;
	if (in->valid & FATTR_FH) {
		h = fsh_get(&s->handles, in->fh, false);
		if (!h)
			return -EBADF;
		fd = h->fd;
	}
	fs_fdname(&n, ino->fd);
	if (!(in->valid & FS_SETATTR_ANY)) {
		/* No attribute at all: the guest's chown(-1, -1) (ATTR_CTIME and the setuid/setgid
		   kill, which FUSE_HANDLE_KILLPRIV_V2 leaves to us), or its file_remove_privs() before
		   a write. Both mean what the host's own chown(-1, -1) does: kill setuid (and setgid
		   with group execute, or when the caller is outside the group), touch ctime. */
		if (fchownat(ino->fd, "", (uid_t)-1, (gid_t)-1, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
			err = -errno;
			goto out;
		}
		err = fs_kill_sgid_of_stranger(s, ino->fd, r->hdr.uid, r->hdr.gid);
		if (err)
			goto out;
	}
	if (in->valid & FATTR_MODE) {
		mode_t mode = fs_policy_mode(s, ino->type, in->mode);

		if (fd >= 0)
			err = fchmod(fd, mode) < 0 ? -errno : 0;
		else if (ino->type == S_IFLNK)
			err = -EOPNOTSUPP;
		else
			err = fchmodat(s->proc_fd, n.s, mode, 0) < 0 ? -errno : 0;
		if (err)
			goto out;
	}
	if (in->valid & (FATTR_UID | FATTR_GID)) {
		uid_t uid = (in->valid & FATTR_UID) ? in->uid : (uid_t)-1;
		gid_t gid = (in->valid & FATTR_GID) ? in->gid : (gid_t)-1;

		/* The host kernel clears setuid/setgid and security.capability on chown itself. */
		if (fchownat(ino->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
			err = -errno;
			goto out;
		}
	}
	if (in->valid & FATTR_SIZE) {
		if (ino->type == S_IFDIR) {
			err = -EISDIR;
			goto out;
		}
		if (ino->type != S_IFREG) {
			err = -EINVAL; /* never open a device or FIFO to truncate it */
			goto out;
		}
		if (fd < 0) {
			tmp_fd = fs_reopen(s, ino, O_WRONLY | O_NONBLOCK);
			if (tmp_fd < 0) {
				err = tmp_fd;
				goto out;
			}
		}
		if (in->valid & FATTR_KILL_SUIDGID) {
			err = fs_kill_priv(fd >= 0 ? fd : tmp_fd, r->hdr.gid);
			if (err)
				goto out;
		}
		if (ftruncate(fd >= 0 ? fd : tmp_fd, (off_t)in->size) < 0) {
			err = -errno;
			goto out;
		}
	}
	if (in->valid & (FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW)) {
		err = fs_setattr_times(s, in, ino, fd);
		if (err)
			goto out;
	}
	err = fs_stat_inode(ino, &st);
	if (!err)
		err = fs_attr_reply(s, &st, o);
out:
	if (tmp_fd >= 0)
		close(tmp_fd);
	fsh_put(&s->handles, h);
	return err;
}

int fs_op_readlink(struct fsi_inode *ino, struct fs_out *o)
{
	/* A Linux target is at most PATH_MAX - 1 bytes: read into PATH_MAX, and a full buffer
	   cannot be mistaken for a cut one, even when the target fills the guest's exactly. */
	char target[PATH_MAX];
	ssize_t n;

	if (ino->type != S_IFLNK)
		return -EINVAL;
	n = readlinkat(ino->fd, "", target, sizeof(target));
	if (n < 0)
		return -errno;
	if ((size_t)n == sizeof(target))
		return -ENAMETOOLONG; /* not a Linux target: never send half a path */
	/* Linux offers a page less one byte (fuse_readlink_page): a 4095-byte target fits. */
	if ((size_t)n > o->cap - o->len)
		return -ENAMETOOLONG;
	return fs_out_put(o, target, (size_t)n); /* the reply is the target without its NUL */
}

int fs_op_statfs(struct fsi_inode *ino, struct fs_out *o)
{
	struct fuse_statfs_out out = { 0 };
	struct statfs sf;

	if (fstatfs(ino->fd, &sf) < 0)
		return -errno;
	out.st.blocks = sf.f_blocks;
	out.st.bfree = sf.f_bfree;
	out.st.bavail = sf.f_bavail;
	out.st.files = sf.f_files;
	out.st.ffree = sf.f_ffree;
	out.st.bsize = (uint32_t)sf.f_bsize;
	out.st.namelen = (uint32_t)sf.f_namelen;
	out.st.frsize = (uint32_t)sf.f_frsize;
	return fs_out_put(o, &out, sizeof(out));
}

int fs_op_access(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino)
{
	struct fs_fdname n;

	if ((r->in.access.mask & W_OK) && s->readonly)
		return -EROFS;
	if (ino->type == S_IFLNK)
		return 0;
	fs_fdname(&n, ino->fd);
	/* AT_EACCESS: check with the fsuid/fsgid we act as, not the VMM's real ids. */
	if (faccessat(s->proc_fd, n.s, (int)(r->in.access.mask & 7), AT_EACCESS) < 0)
		return -errno;
	return 0;
}
