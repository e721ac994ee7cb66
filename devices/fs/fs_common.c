/* fs_common.c: helpers every operation file uses: /proc/self/fd names, attributes, lookups, reopening. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "devices/fs/fs_ops.h"

void fs_fdname(struct fs_fdname *n, int fd)
{
	snprintf(n->s, sizeof(n->s), "%d", fd);
}

void fs_fdpath(struct fs_fdpath *p, int fd)
{
	snprintf(p->s, sizeof(p->s), "/proc/self/fd/%d", fd);
}

void fs_entry_timeout(const struct fs_server *s, uint64_t *sec, uint32_t *nsec)
{
	*nsec = 0;
	switch (s->cache) {
	case FS_CACHE_NEVER:
		*sec = 0;
		break;
	case FS_CACHE_ALWAYS:
		*sec = 86400;
		break;
	default:
		*sec = 1;
		break;
	}
}

/* The kernel's new_encode_dev(): what fuse_attr.rdev and fuse_mknod_in.rdev carry. */
static uint32_t fs_encode_dev(dev_t dev)
{
	uint32_t ma = major(dev), mi = minor(dev);

	return (mi & 0xff) | (ma << 8) | ((mi & ~0xffu) << 12);
}

void fs_fill_attr(const struct stat *st, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = st->st_ino;
	a->size = (uint64_t)st->st_size;
	a->blocks = (uint64_t)st->st_blocks;
	a->atime = (uint64_t)st->st_atim.tv_sec;
	a->mtime = (uint64_t)st->st_mtim.tv_sec;
	a->ctime = (uint64_t)st->st_ctim.tv_sec;
	a->atimensec = (uint32_t)st->st_atim.tv_nsec;
	a->mtimensec = (uint32_t)st->st_mtim.tv_nsec;
	a->ctimensec = (uint32_t)st->st_ctim.tv_nsec;
	a->mode = st->st_mode;
	a->nlink = (uint32_t)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->rdev = fs_encode_dev(st->st_rdev);
	a->blksize = (uint32_t)st->st_blksize;
}

int fs_stat_inode(const struct fsi_inode *ino, struct stat *st)
{
	if (fstatat(ino->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

int fs_check_entry_name(const char *name)
{
	if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
		return -EINVAL;
	return 0;
}

int fs_lookup_entry(struct fs_server *s, int parent_fd, const char *name, struct fuse_entry_out *eo,
		    struct fsi_inode **out)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		/* One component, no '/', no "..": BENEATH is belt and braces; NO_SYMLINKS with
		   O_PATH|O_NOFOLLOW hands back a final symlink as itself instead of following it. */
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct fsi_inode *ino;
	struct stat st;
	int fd, err;

	err = fs_check_entry_name(name);
	if (err)
		return err;
	fd = (int)syscall(SYS_openat2, parent_fd, name, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = fsi_learn(&s->inodes, fd, &st, &ino);
	if (err)
		return err;
	memset(eo, 0, sizeof(*eo));
	eo->nodeid = ino->nodeid;
	fs_entry_timeout(s, &eo->entry_valid, &eo->entry_valid_nsec);
	fs_entry_timeout(s, &eo->attr_valid, &eo->attr_valid_nsec);
	fs_fill_attr(&st, &eo->attr);
	if (out)
		*out = ino;
	else
		fsi_put(&s->inodes, ino);
	return 0;
}

int fs_reopen(struct fs_server *s, const struct fsi_inode *ino, int flags)
{
	struct fs_fdname n;
	int fd;

	fs_fdname(&n, ino->fd);
	fd = openat(s->proc_fd, n.s, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int fs_clear_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int fs_kill_priv(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	/* Like the kernel's setattr_should_drop_suidgid(): setuid always, setgid only with group
	   execute (without it, setgid means mandatory locking and is kept). */
	if ((st.st_mode & S_ISUID) || (st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) {
		mode_t m = st.st_mode & 07777 & ~(mode_t)S_ISUID;

		if (m & S_IXGRP)
			m &= ~(mode_t)S_ISGID;
		if (fchmod(fd, m) < 0)
			return -errno;
	}
	if (fremovexattr(fd, "security.capability") < 0 && errno != ENODATA && errno != ENOTSUP)
		return -errno;
	return 0;
}
