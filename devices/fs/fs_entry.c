/* fs_entry.c: operations that create, remove or rename directory entries, all relative to a parent fd. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "devices/fs/fs_ops.h"

/*
 * Every call here takes (parent O_PATH fd, one component without '/' that is not "." or ".."), and
 * none of mkdirat, mknodat, symlinkat, unlinkat, renameat2 or linkat (without AT_SYMLINK_FOLLOW)
 * follows a final symlink, so a name can only ever mean an entry of that very directory.
 */
static int fs_entry_prep(struct fs_server *s, struct fsi_inode *dir, const char *name)
{
	if (s->readonly)
		return -EROFS;
	if (dir->type != S_IFDIR)
		return -ENOTDIR;
	if (fs_pseudo_refuse(s, dir))
		return -EACCES; /* mkdir in a cgroup or configfs stub would create kernel objects */
	return fs_check_entry_name(name);
}

/* After creating name under dir: look it up for the entry reply (nlookup + 1). */
static int fs_entry_reply(struct fs_server *s, struct fsi_inode *dir, const char *name,
			  struct fs_out *o)
{
	struct fuse_entry_out eo;
	int err = fs_lookup_made(s, dir->fd, name, &eo, NULL);

	if (err)
		return err;
	err = fs_out_put(o, &eo, sizeof(eo));
	if (err)
		fsi_forget(&s->inodes, eo.nodeid, 1);
	return err;
}

/*
 * The creating call's umask. With FUSE_DONT_MASK (agreed with FUSE_POSIX_ACL) the guest leaves the
 * caller's umask to us, because a parent's default ACL replaces it: the host kernel makes that
 * choice when our umask is the caller's for the call. Otherwise the guest already applied it and
 * ours stays 0. Per thread: the workers' fs struct is their own (fs_thread_prepare).
 */
static void fs_umask_enter(const struct fs_server *s, uint32_t caller_umask)
{
	if (fs_has_flag(s, FUSE_DONT_MASK))
		umask((mode_t)(caller_umask & 0777));
}

static void fs_umask_leave(const struct fs_server *s)
{
	if (fs_has_flag(s, FUSE_DONT_MASK))
		umask(0);
}

/* The kernel's new_decode_dev() of fuse_mknod_in.rdev. */
static dev_t fs_decode_dev(uint32_t dev)
{
	unsigned int ma = (dev & 0xfff00) >> 8;
	unsigned int mi = (dev & 0xff) | ((dev >> 12) & 0xfff00);

	return makedev(ma, mi);
}

int fs_op_mknod(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		struct fs_out *o)
{
	mode_t mode = r->in.mknod.mode;
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		break;
	default:
		return -EINVAL;
	}
	/* A device node on the host is a door to host hardware (char 1:1 is /dev/mem): only where
	   the share says so, and then the host kernel still wants CAP_MKNOD (guest root only). */
	if ((S_ISCHR(mode) || S_ISBLK(mode)) && !s->allow_dev)
		return -EPERM;
	mode = (mode & S_IFMT) | fs_policy_mode(s, mode & S_IFMT, mode);
	fs_umask_enter(s, r->in.mknod.umask);
	err = mknodat(dir->fd, r->name, mode, fs_decode_dev(r->in.mknod.rdev)) < 0 ? -errno : 0;
	fs_umask_leave(s);
	if (err)
		return err;
	return fs_entry_reply(s, dir, r->name, o);
}

int fs_op_mkdir(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		struct fs_out *o)
{
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	fs_umask_enter(s, r->in.mkdir.umask);
	err = mkdirat(dir->fd, r->name, fs_policy_mode(s, S_IFDIR, r->in.mkdir.mode)) < 0 ? -errno : 0;
	fs_umask_leave(s);
	if (err)
		return err;
	return fs_entry_reply(s, dir, r->name, o);
}

int fs_op_symlink(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		  struct fs_out *o)
{
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	/* The target is stored, never resolved by us: it means something only inside the guest. */
	if (symlinkat(r->name2, dir->fd, r->name) < 0)
		return -errno;
	return fs_entry_reply(s, dir, r->name, o);
}

int fs_op_link(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
	       struct fs_out *o)
{
	struct fsi_inode *old;
	struct fs_fdpath p;
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	old = fsi_get(&s->inodes, r->in.link.oldnodeid);
	if (!old)
		return -ESTALE;
	if (old->type == S_IFDIR) {
		err = -EPERM;
		goto out;
	}
	/* linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, which an fsuid switch drops; the
	   /proc/self/fd magic link reaches the same inode (symlinks included: the jump is final). */
	fs_fdpath(&p, old->fd);
	if (linkat(AT_FDCWD, p.s, dir->fd, r->name, AT_SYMLINK_FOLLOW) < 0) {
		err = -errno;
		goto out;
	}
	err = fs_entry_reply(s, dir, r->name, o);
out:
	fsi_put(&s->inodes, old);
	return err;
}

int fs_op_unlink(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		 struct fs_out *o)
{
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	return unlinkat(dir->fd, r->name, 0) < 0 ? -errno : 0;
}

int fs_op_rmdir(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		struct fs_out *o)
{
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	return unlinkat(dir->fd, r->name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

int fs_op_rename(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		 struct fs_out *o)
{
	uint32_t flags = r->in.rename2.flags;
	struct fsi_inode *newdir;
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	err = fs_check_entry_name(r->name2);
	if (err)
		return err;
	/* RENAME_WHITEOUT leaves a 0:0 character device (overlayfs' whiteout, allowed to anyone
	   since Linux 5.8) at the old name: a device node we never open, like any other. */
	if (flags & ~(uint32_t)(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return -EINVAL;
	newdir = fsi_get(&s->inodes, r->in.rename2.newdir);
	if (!newdir)
		return -ESTALE;
	if (newdir->type != S_IFDIR)
		err = -ENOTDIR;
	else if (syscall(SYS_renameat2, dir->fd, r->name, newdir->fd, r->name2, flags) < 0)
		err = -errno;
	fsi_put(&s->inodes, newdir);
	return err;
}

/*
 * CREATE's open of a name that already exists: only ever a regular file. The name is resolved to
 * an O_PATH fd first (no symlink followed, nothing opened for I/O), its type checked, and only then
 * is that very inode opened through /proc/self/fd: a FIFO or a device is never opened on the host,
 * and a name swapped meanwhile cannot redirect the open. Returns the fd or -errno.
 */
static int fs_create_existing(struct fs_server *s, const struct fuse_req *r,
			      struct fsi_inode *dir, int flags)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct fs_fdname n;
	struct stat st;
	int pfd, fd, err = 0;

	pfd = (int)syscall(SYS_openat2, dir->fd, r->name, &how, sizeof(how));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0)
		err = -errno;
	else if (S_ISDIR(st.st_mode))
		err = -EISDIR;
	else if (S_ISLNK(st.st_mode))
		err = -ELOOP; /* never followed, as with O_NOFOLLOW */
	else if (!S_ISREG(st.st_mode))
		err = -EACCES; /* a FIFO, socket or device: the guest kernel's business */
	if (err) {
		close(pfd);
		return err;
	}
	fs_fdname(&n, pfd);
	/* The /proc/self/fd entry is a (magic) link: O_NOFOLLOW would refuse it. */
	fd = openat(s->proc_fd, n.s, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (!err && (flags & O_TRUNC) && (r->in.create.open_flags & FUSE_OPEN_KILL_SUIDGID))
		err = fs_kill_priv(fd, r->hdr.gid);
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

/* The reply of CREATE and TMPFILE: the new inode's entry, then the open handle on fd (consumed),
   opened with host flags `flags` in directory dir. */
static int fs_open_reply(struct fs_server *s, int fd, const struct fsi_inode *dir, int flags,
			 const struct fuse_entry_out *eo, struct fs_out *o)
{
	struct fuse_open_out oo = { 0 };
	/* A file is on its directory's file system: dir->dev is its st_dev. */
	int err = fsh_add(&s->handles, fd, fs_file_kind(s, dir->dev, flags), NULL, &oo.fh);

	if (err) {
		fsi_forget(&s->inodes, eo->nodeid, 1);
		return err;
	}
	oo.open_flags = fs_open_flags(s);
	err = fs_out_put(o, eo, sizeof(*eo));
	if (!err)
		err = fs_out_put(o, &oo, sizeof(oo));
	if (err) {
		if (fsh_release(&s->handles, oo.fh, false))
			err = -EIO;
		fsi_forget(&s->inodes, eo->nodeid, 1);
	}
	return err;
}

int fs_op_create(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		 struct fs_out *o)
{
	const struct fuse_create_in *in = &r->in.create;
	struct fuse_entry_out eo;
	struct open_how how = { 0 };
	int fd, flags, err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	/*
	 * Never O_CREAT on a name that may exist (it would open a FIFO or device before we could
	 * look): first an exclusive create, which makes a new regular file or fails with EEXIST;
	 * only then, unless the guest asked O_EXCL itself, the existing name (fs_create_existing).
	 * O_NONBLOCK keeps a lease from blocking the open; O_NOCTTY always.
	 */
	flags = fs_open_host_flags(s, in->flags) | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;
	how.flags = (uint64_t)(unsigned int)flags | O_CREAT | O_EXCL | O_CLOEXEC;
	how.mode = fs_policy_mode(s, S_IFREG, in->mode);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fs_umask_enter(s, in->umask);
	fd = (int)syscall(SYS_openat2, dir->fd, r->name, &how, sizeof(how));
	err = fd < 0 ? -errno : 0;
	fs_umask_leave(s);
	if (err == -EEXIST && !(in->flags & O_EXCL))
		fd = fs_create_existing(s, r, dir, flags);
	else if (err)
		return err;
	if (fd < 0)
		return fd;
	err = fs_clear_nonblock(fd, flags);
	if (!err)
		err = fs_lookup_made(s, dir->fd, r->name, &eo, NULL);
	if (err) {
		close(fd);
		return err;
	}
	return fs_open_reply(s, fd, dir, flags, &eo, o);
}

int fs_op_tmpfile(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		  struct fs_out *o)
{
	const struct fuse_create_in *in = &r->in.create;
	struct fuse_entry_out eo;
	struct fsi_inode *ino;
	struct fs_fdname n;
	struct stat st;
	int fd, path_fd, err;

	if (s->readonly)
		return -EROFS;
	if (dir->type != S_IFDIR)
		return -ENOTDIR;
	/* An unnamed file in that very directory (O_TMPFILE takes it as the path, "." of its fd);
	   O_EXCL, if the guest asked, keeps it from ever being linked. */
	fs_umask_enter(s, in->umask);
	int flags = (int)in->flags & (O_ACCMODE | O_EXCL | O_APPEND | O_SYNC | O_DSYNC | O_NOATIME);
	fd = openat(dir->fd, ".", flags | O_TMPFILE | O_CLOEXEC, fs_policy_mode(s, S_IFREG, in->mode));
	err = fd < 0 ? -errno : 0;
	fs_umask_leave(s);
	if (err)
		return err;
	/* Its nodeid holds an O_PATH fd like any inode's, reached through the open one. */
	fs_fdname(&n, fd);
	path_fd = openat(s->proc_fd, n.s, O_PATH | O_CLOEXEC);
	if (path_fd < 0 || fstat(path_fd, &st) < 0) {
		err = -errno;
		if (path_fd >= 0)
			close(path_fd);
		close(fd);
		return err;
	}
	err = fsi_learn(&s->inodes, path_fd, &st, &ino);
	if (err) {
		close(fd);
		return err;
	}
	memset(&eo, 0, sizeof(eo));
	eo.nodeid = ino->nodeid;
	fs_entry_timeout(s, &eo.entry_valid, &eo.entry_valid_nsec);
	fs_entry_timeout(s, &eo.attr_valid, &eo.attr_valid_nsec);
	fs_fill_attr(&st, &eo.attr);
	fsi_put(&s->inodes, ino);
	return fs_open_reply(s, fd, dir, flags, &eo, o);
}
