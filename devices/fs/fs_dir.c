/* fs_dir.c: directory handles: OPENDIR, READDIR, READDIRPLUS (with lookups), RELEASEDIR, FSYNCDIR. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/fs/fs_budget.h"
#include "devices/fs/fs_ops.h"

int fs_op_opendir(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
		  struct fs_out *o)
{
	struct fuse_open_out oo = { 0 };
	int fd, err;

	if (ino->type != S_IFDIR)
		return -ENOTDIR;
	err = fs_pseudo_refuse(s, ino);
	if (err)
		return err;
	fd = fs_reopen(s, ino, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	err = fsh_add(&s->handles, fd, FSH_DIR, NULL, &oo.fh);
	if (err)
		return err;
	if (s->cache == FS_CACHE_ALWAYS)
		oo.open_flags = FOPEN_CACHE_DIR | FOPEN_KEEP_CACHE;
	err = fs_out_put(o, &oo, sizeof(oo));
	if (err && fsh_release(&s->handles, oo.fh, true))
		err = -EIO;
	return err;
}

int fs_op_releasedir(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	return fsh_release(&s->handles, r->in.release.fh, true);
}

int fs_op_fsyncdir(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	struct fsh_handle *h = fsh_get(&s->handles, r->in.fsync.fh, true);
	int err = 0;

	if (!h)
		return -EBADF;
	if (((r->in.fsync.fsync_flags & FUSE_FSYNC_FDATASYNC) ? fdatasync(h->fd) : fsync(h->fd)) < 0)
		err = -errno;
	fsh_put(&s->handles, h);
	return err;
}

/* One READDIRPLUS entry's lookup; "." and ".." and vanished names get nodeid 0 (no dentry). */
static void fs_plus_entry(struct fs_server *s, int dirfd, const char *name,
			  struct fuse_entry_out *eo)
{
	if (fs_lookup_entry(s, dirfd, name, eo, NULL))
		memset(eo, 0, sizeof(*eo));
}

/*
 * Position the handle's stream for a READDIR at `offset`, the d_off cookie of the last entry the
 * guest got (0 at the start). The usual case continues where the previous reply stopped, from the
 * kept entries (or the fd's position when none are kept), without touching the fd; anything else
 * seeks the host directory there and drops what was kept.
 */
static int fs_dir_position(struct fsh_handle *h, uint64_t offset)
{
	struct fsh_dirstream *ds = &h->dir;

	if (ds->valid && offset == ds->cookie && offset != 0)
		return 0;
	if (offset > INT64_MAX || lseek(h->fd, (off_t)offset, SEEK_SET) < 0)
		return -EINVAL;
	ds->len = ds->pos = 0;
	ds->cookie = offset;
	ds->valid = true;
	return 0;
}

/* A buffer for the next getdents: the handle's own when the budget has one, else this thread's
   (*borrowed: its leftover entries cannot stay with the handle). NULL: out of memory. */
/* Aligned for the struct dirent64 that getdents64 lays out in it: a byte array alone may land
   anywhere in the thread's TLS block (UBSan caught one at offset 4 mod 8). */
static __thread _Alignas(struct dirent64) uint8_t fs_dir_scratch[FSH_DIRBUF];

static uint8_t *fs_dir_buffer(struct fsh_handle *h, bool *borrowed)
{
	struct fsh_dirstream *ds = &h->dir;

	*borrowed = false;
	if (ds->buf)
		return ds->buf;
	if (fs_budget_take_dir_buffer()) {
		ds->buf = malloc(FSH_DIRBUF);
		if (ds->buf)
			return ds->buf;
		fs_budget_put_dir_buffer();
	}
	*borrowed = true;
	return fs_dir_scratch;
}

/*
 * After a reply: a buffer whose entries were all given out is freed (an idle open directory then
 * costs no buffer); entries left in a borrowed buffer are dropped and the stream is marked for a
 * seek to its cookie, which the next READDIR does.
 */
static void fs_dir_settle(struct fsh_handle *h, bool borrowed)
{
	struct fsh_dirstream *ds = &h->dir;

	if (ds->pos < ds->len) {
		if (borrowed)
			ds->valid = false;
		return;
	}
	ds->len = ds->pos = 0;
	if (ds->buf) {
		free(ds->buf);
		ds->buf = NULL;
		fs_budget_put_dir_buffer();
	}
}

int fs_op_readdir(struct fs_server *s, const struct fuse_req *r, bool plus, struct fs_out *o)
{
	size_t limit = r->in.read.size;
	struct fsh_handle *h;
	struct fsh_dirstream *ds;
	size_t start = o->len;
	bool full = false, borrowed = false;
	struct stat dst; /* the directory's: d_ino is an inode of its file system (fs_map_ino) */
	uint8_t *buf = NULL;
	int err = 0;

	if (limit > o->cap - o->len)
		limit = o->cap - o->len;
	h = fsh_get(&s->handles, r->in.read.fh, true);
	if (!h)
		return -EBADF;
	pthread_mutex_lock(&h->dir_lock);
	ds = &h->dir;
	err = fs_dir_position(h, r->in.read.offset);
	if (err)
		goto out;
	buf = ds->buf; /* entries kept from the last reply, if any */
	if (fstat(h->fd, &dst) < 0) {
		err = -errno;
		goto out;
	}
	while (!full) {
		if (ds->pos >= ds->len) {
			ssize_t n;

			if (!buf)
				buf = fs_dir_buffer(h, &borrowed);
			n = getdents64(h->fd, buf, FSH_DIRBUF);

			if (n < 0) {
				err = -errno;
				break;
			}
			ds->len = (size_t)n;
			ds->pos = 0;
			if (n == 0)
				break;
		}
		while (ds->pos < ds->len) {
			struct dirent64 *d = (struct dirent64 *)(buf + ds->pos);
			size_t namelen = strlen(d->d_name);
			size_t hdr = plus ? FUSE_NAME_OFFSET_DIRENTPLUS : FUSE_NAME_OFFSET;
			size_t rec = FUSE_DIRENT_ALIGN(hdr + namelen);
			struct fuse_dirent *de;
			uint8_t *p;

			if (o->len - start + rec > limit) {
				full = true;
				break;
			}
			p = fs_out_reserve(o, rec);
			if (plus) {
				struct fuse_direntplus *dp = (struct fuse_direntplus *)p;
				struct fuse_entry_out eo;

				if (fs_check_entry_name(d->d_name))
					memset(&eo, 0, sizeof(eo));
				else
					fs_plus_entry(s, h->fd, d->d_name, &eo);
				memcpy(&dp->entry_out, &eo, sizeof(eo));
				de = &dp->dirent;
			} else {
				de = (struct fuse_dirent *)p;
			}
			/* An entry whose number cannot be mapped shows as 0 here; its LOOKUP fails. */
			if (fs_map_ino(s, dst.st_dev, d->d_ino, &de->ino))
				de->ino = 0;
			de->off = (uint64_t)d->d_off;
			de->namelen = (uint32_t)namelen;
			de->type = d->d_type;
			memcpy(de->name, d->d_name, namelen);
			ds->pos += d->d_reclen;
			ds->cookie = (uint64_t)d->d_off;
		}
	}
	/* An empty reply means "end of directory", so one entry that cannot fit is an error. */
	if (!err && full && o->len == start)
		err = -EINVAL;
	/* Like getdents(2) itself: entries already gathered are delivered (the stream stays
	   positioned after them) and a failed read of the host directory is reported by the next
	   call, which reads it again; dropping them would lose entries. */
	if (err && o->len > start)
		err = 0;
out:
	/* On error the entries taken from the buffer are not delivered: the next call must seek. */
	if (err)
		h->dir.valid = false;
	fs_dir_settle(h, borrowed);
	pthread_mutex_unlock(&h->dir_lock);
	fsh_put(&s->handles, h);
	if (err) {
		/* The guest gets only the error: give back the lookups this reply would have carried. */
		size_t pos = start;

		while (plus && pos < o->len) {
			struct fuse_direntplus dp;

			memcpy(&dp, o->buf + pos, sizeof(dp));
			if (dp.entry_out.nodeid)
				fsi_forget(&s->inodes, dp.entry_out.nodeid, 1);
			pos += FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET_DIRENTPLUS + dp.dirent.namelen);
		}
		o->len = start;
	}
	return err;
}
