/* fs_common.c: helpers every operation file uses: /proc/self/fd names, attributes, lookups, reopening. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/magic.h>
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

/* Not in <linux/magic.h>: the kernel keeps them private (fs/configfs, fs/fuse/control.c). */
#define FS_CONFIGFS_MAGIC 0x62656570
#define FS_FUSECTL_MAGIC 0x65735543

bool fs_pseudo_magic(long f_type)
{
	switch ((unsigned long)f_type) {
	case PROC_SUPER_MAGIC:    /* /proc/PID/mem, kmsg, kcore, sysrq-trigger... */
	case SYSFS_MAGIC:         /* device attributes, vmcoreinfo */
	case TRACEFS_MAGIC:
	case DEBUGFS_MAGIC:
	case SECURITYFS_MAGIC:
	case FS_CONFIGFS_MAGIC:
	case BPF_FS_MAGIC:        /* pinned maps and programs */
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case SELINUX_MAGIC:
	case SMACK_MAGIC:
	case PSTOREFS_MAGIC:
	case EFIVARFS_MAGIC:      /* writing some variables can brick firmware */
	case BINFMTFS_MAGIC:
	case NSFS_MAGIC:          /* namespace files bind-mounted somewhere */
	case FS_FUSECTL_MAGIC:    /* abort other FUSE connections */
		return true;
	default:
		return false;
	}
}

int fs_map_ino(struct fs_server *s, dev_t dev, uint64_t ino, uint64_t *out)
{
	unsigned int n = __atomic_load_n(&s->nr_devs, __ATOMIC_ACQUIRE), i;

	if (ino >> FS_INO_BITS)
		return -EOVERFLOW;
	for (i = 0; i < n && s->devs[i] != dev; i++) {
	}
	if (i == n) {
		pthread_mutex_lock(&s->dev_lock);
		n = s->nr_devs;
		for (i = 0; i < n && s->devs[i] != dev; i++) {
		}
		if (i == n && n < FS_MAX_DEVS) {
			s->devs[n] = dev;
			/* Release: a reader that sees the count sees the entry. */
			__atomic_store_n(&s->nr_devs, n + 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&s->dev_lock);
		if (i == FS_MAX_DEVS)
			return -EOVERFLOW;
	}
	*out = (uint64_t)i << FS_INO_BITS | ino;
	return 0;
}

/*
 * A looked-up inode on another file system than the share's root (st_dev differs; checked only
 * then, so the common case costs nothing). Pseudo file systems: the directory where one is mounted
 * is served as a stub (so a guest booted with --root / can mount its own /proc or /sys over it):
 * LOOKUP and GETATTR answer, everything else on it is refused (fs_pseudo_refuse), and nothing
 * inside it can be looked up (EACCES). Any other inode of a pseudo file system (a bind-mounted
 * /proc/kmsg, say) is refused outright. Other file systems are crossed like directories of the
 * share; fs_map_ino keeps their inode numbers apart.
 */
static int fs_check_foreign(struct fs_server *s, int parent_fd, int fd, const struct stat *st)
{
	struct statfs sf;
	struct stat pst;

	if (st->st_dev == s->root_dev)
		return 0;
	if (fstatfs(fd, &sf) < 0)
		return -errno;
	if (!fs_pseudo_magic(sf.f_type))
		return 0;
	if (fstat(parent_fd, &pst) < 0)
		return -errno;
	return pst.st_dev != st->st_dev && S_ISDIR(st->st_mode) ? 0 : -EACCES;
}

int fs_pseudo_refuse(const struct fs_server *s, const struct fsi_inode *ino)
{
	struct statfs sf;

	if (ino->dev == s->root_dev)
		return 0;
	if (fstatfs(ino->fd, &sf) < 0)
		return -errno;
	return fs_pseudo_magic(sf.f_type) ? -EACCES : 0;
}

/*
 * This thread's last LOOKUP that went as far as openat2 found an inode the table did not hold (a
 * 1-bit prediction, per queue thread): the next one skips the stat-first look, which only pays when
 * the inode is known. A guest walking new files (a first `ls -l`, `find`, a build reading its
 * sources) keeps it set: two system calls per name instead of three; a known inode found after an
 * openat2 clears it (that lookup cost openat2, fstat and a close on the ring instead of one stat).
 */
static __thread bool fs_lookup_expect_new;

static int fs_lookup_entry_as(struct fs_server *s, int parent_fd, const char *name,
			      struct fuse_entry_out *eo, struct fsi_inode **out, bool made)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		/* One component, no '/', no "..": BENEATH is belt and braces; NO_SYMLINKS with
		   O_PATH|O_NOFOLLOW hands back a final symlink as itself instead of following it. */
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct fsi_inode *ino;
	struct stat st;
	uint64_t gino = 0;
	int fd, err;

	err = fs_check_entry_name(name);
	if (err)
		return err;
	/*
	 * The name first: one component (no '/', '.' or '..'), its last link not followed, so the
	 * stat cannot leave the directory. An inode of the share's own file system that the table
	 * already holds (a revalidation, a name the guest looked up before) is answered from that:
	 * one system call instead of three (openat2, fstat, close of the duplicate fd). The name
	 * may change right after; the answer is then the inode it named at the stat, as if the
	 * LOOKUP had come a moment earlier.
	 */
	if (!made && !fs_lookup_expect_new) {
		if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (st.st_dev == s->root_dev && !fs_map_ino(s, st.st_dev, st.st_ino, &gino)) {
			ino = fsi_relearn(&s->inodes, &st);
			if (ino)
				goto reply;
		}
	}
	fd = (int)syscall(SYS_openat2, parent_fd, name, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		err = -errno;
	else
		err = fs_check_foreign(s, parent_fd, fd, &st);
	if (!err)
		err = fs_map_ino(s, st.st_dev, st.st_ino, &gino);
	if (err) {
		close(fd);
		return err;
	}
	err = fsi_learn(&s->inodes, fd, &st, &ino);
	if (err)
		return err;
	if (!made)
		fs_lookup_expect_new = ino->fd == fd; /* else fd was a duplicate, closed */
reply:
	memset(eo, 0, sizeof(*eo));
	eo->nodeid = ino->nodeid;
	fs_entry_timeout(s, &eo->entry_valid, &eo->entry_valid_nsec);
	fs_entry_timeout(s, &eo->attr_valid, &eo->attr_valid_nsec);
	fs_fill_attr(&st, &eo->attr);
	eo->attr.ino = gino;
	if (out)
		*out = ino;
	else
		fsi_put(&s->inodes, ino);
	return 0;
}

int fs_lookup_entry(struct fs_server *s, int parent_fd, const char *name, struct fuse_entry_out *eo,
		    struct fsi_inode **out)
{
	return fs_lookup_entry_as(s, parent_fd, name, eo, out, false);
}

int fs_lookup_made(struct fs_server *s, int parent_fd, const char *name, struct fuse_entry_out *eo,
		   struct fsi_inode **out)
{
	return fs_lookup_entry_as(s, parent_fd, name, eo, out, true);
}

int fs_reopen(struct fs_server *s, const struct fsi_inode *ino, int flags)
{
	struct fs_fdname n;
	int fd;

	fs_fdname(&n, ino->fd);
	fd = openat(s->proc_fd, n.s, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int fs_clear_nonblock(int fd, int flags)
{
	return fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? -errno : 0;
}

int fs_kill_sgid_of_stranger(struct fs_server *s, int fd, uint32_t uid, uint32_t gid)
{
	struct fs_fdname n;
	struct stat st;

	if (uid == 0)
		return 0;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (st.st_mode & (S_ISGID | S_IXGRP)) != S_ISGID || st.st_gid == gid)
		return 0;
	fs_fdname(&n, fd);
	return fchmodat(s->proc_fd, n.s, st.st_mode & 07777 & ~(mode_t)S_ISGID, 0) < 0 ? -errno : 0;
}

int fs_kill_priv(int fd, uint32_t gid)
{
	struct stat st;
	mode_t was, m;

	if (fstat(fd, &st) < 0)
		return -errno;
	/* Like the kernel's setattr_should_drop_suidgid() for a caller without CAP_FSETID: setuid
	   always; setgid with group execute, or without it (the old mandatory locking mark, kept
	   for the file's group) when the caller is outside the file's group. One fstat and at most
	   one fchmod. */
	was = st.st_mode & 07777;
	m = was;
	if (S_ISREG(st.st_mode)) {
		m &= ~(mode_t)S_ISUID;
		if ((m & S_IXGRP) || st.st_gid != gid)
			m &= ~(mode_t)S_ISGID;
	}
	if (m != was && fchmod(fd, m) < 0)
		return -errno;
	/* Removing needs CAP_SETFCAP even when there is nothing to remove, so an unprivileged
	   ringvm would fail every such write: look first (a capability set meanwhile by someone
	   else is their race, as it is for the kernel's own check). */
	if (fgetxattr(fd, "security.capability", NULL, 0) < 0)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
	if (fremovexattr(fd, "security.capability") < 0 && errno != ENODATA && errno != ENOTSUP)
		return -errno;
	return 0;
}
