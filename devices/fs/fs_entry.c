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
	return fs_check_entry_name(name);
}

/* After creating name under dir: look it up for the entry reply (nlookup + 1). */
static int fs_entry_reply(struct fs_server *s, struct fsi_inode *dir, const char *name,
			  struct fs_out *o)
{
	struct fuse_entry_out eo;
	int err = fs_lookup_entry(s, dir->fd, name, &eo, NULL);

	if (err)
		return err;
	err = fs_out_put(o, &eo, sizeof(eo));
	if (err)
		fsi_forget(&s->inodes, eo.nodeid, 1);
	return err;
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
	/* Device nodes need CAP_MKNOD, which only a guest root acting as host root keeps. */
	if (mknodat(dir->fd, r->name, mode, fs_decode_dev(r->in.mknod.rdev)) < 0)
		return -errno;
	return fs_entry_reply(s, dir, r->name, o);
}

int fs_op_mkdir(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		struct fs_out *o)
{
	int err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	if (mkdirat(dir->fd, r->name, r->in.mkdir.mode & 07777) < 0)
		return -errno;
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
	/* RENAME_WHITEOUT would create a device node (overlayfs' business), not the guest's. */
	if (flags & ~(uint32_t)(RENAME_NOREPLACE | RENAME_EXCHANGE))
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

int fs_op_create(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *dir,
		 struct fs_out *o)
{
	const struct fuse_create_in *in = &r->in.create;
	struct fuse_open_out oo = { 0 };
	struct fuse_entry_out eo;
	struct open_how how = { 0 };
	struct stat st;
	int fd, err = fs_entry_prep(s, dir, r->name);

	if (err)
		return err;
	/*
	 * O_CREAT on an existing name would follow a planted symlink or open a FIFO for I/O, so:
	 * RESOLVE_NO_SYMLINKS refuses a symlink (ELOOP), O_NONBLOCK keeps a FIFO open from
	 * blocking, and anything that turns out not to be a regular file is closed at once.
	 */
	how.flags = ((uint64_t)in->flags & ~(uint64_t)(O_NOCTTY | O_DIRECT | O_PATH | O_TMPFILE |
						       O_DIRECTORY)) |
		    O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	how.mode = in->mode & 07777;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, dir->fd, r->name, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EACCES;
	}
	err = fs_clear_nonblock(fd);
	if (!err)
		err = fs_lookup_entry(s, dir->fd, r->name, &eo, NULL);
	if (err) {
		close(fd);
		return err;
	}
	err = fsh_add(&s->handles, fd, false, &oo.fh);
	if (err) {
		fsi_forget(&s->inodes, eo.nodeid, 1);
		return err;
	}
	oo.open_flags = fs_open_flags(s);
	err = fs_out_put(o, &eo, sizeof(eo));
	if (!err)
		err = fs_out_put(o, &oo, sizeof(oo));
	if (err) {
		if (fsh_release(&s->handles, oo.fh, false))
			err = -EIO;
		fsi_forget(&s->inodes, eo.nodeid, 1);
	}
	return err;
}
