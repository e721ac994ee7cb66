/* fs_file.c: open files: OPEN/RELEASE, the READ/WRITE checks, FSYNC, FALLOCATE, LSEEK, COPY_FILE_RANGE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/fs/fs_close.h"
#include "devices/fs/fs_ops.h"
#include "devices/virtio/xfer.h"

/*
 * May this open take a parked fd (inode.h, fsi_park), and its RELEASE park one? Only a plain
 * read-only open (no O_TRUNC, O_DIRECT, O_NONBLOCK, O_NOATIME, sync flags: those are per open and
 * part of nothing we compare) of a file on the share's own file system when that is local storage:
 * NFS and FUSE revalidate their caches at open (close-to-open consistency), which a reused fd skips.
 * On local storage an open(2) of an inode we hold decides only permission (stamped: fsi_stamp) and
 * nothing an earlier fd of the same flags does not already have.
 */
static bool fs_parkable(const struct fs_server *s, const struct fsi_inode *ino, int flags)
{
	return s->root_local && ino->dev == s->root_dev &&
	       (flags & ~(O_LARGEFILE | O_CLOEXEC | O_NOFOLLOW)) == O_RDONLY;
}

/*
 * The parked fd of ino opened as this request's uid and gid with these flags, if a stat of it now
 * still has the stamp of the stat made before it was opened; -1 when none (a stale one is closed).
 */
static int fs_open_parked(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
			  int flags, struct fsi_park *park)
{
	struct fsi_stamp now;
	struct stat st;
	int fd = fsi_unpark(&s->inodes, ino, r->hdr.uid, r->hdr.gid, flags, park);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0) {
		fsi_stamp_of(&now, &st);
		if (fsi_stamp_same(&now, &park->stamp))
			return fd;
	}
	fs_close(fd);
	return -1;
}

int fs_op_open(struct fs_server *s, const struct fuse_req *r, struct fsi_inode *ino,
	       struct fs_out *o)
{
	int flags = fs_open_host_flags(s, r->in.open.flags);
	struct fuse_open_out oo = { 0 };
	struct fsi_park park = { 0 };
	bool parkable = fs_parkable(s, ino, flags);
	struct stat st;
	int fd, err;

	if (ino->type == S_IFDIR)
		return -EISDIR;
	/* Device nodes and FIFOs are the guest kernel's (init_special_inode); never opened here. */
	if (ino->type != S_IFREG)
		return -EACCES;
	if (s->readonly && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		return -EROFS;
	if (parkable) {
		fd = fs_open_parked(s, r, ino, flags, &park);
		if (fd >= 0)
			goto add;
		/* The stamp comes before the open: a change after it shows at the next reuse. */
		if (fstat(ino->fd, &st) < 0)
			return -errno;
		park.nodeid = ino->nodeid;
		park.uid = r->hdr.uid;
		park.gid = r->hdr.gid;
		park.flags = flags;
		fsi_stamp_of(&park.stamp, &st);
	}
	fd = fs_reopen(s, ino, flags | O_NONBLOCK);
	if (fd < 0)
		return fd;
	err = fs_clear_nonblock(fd, flags);
	if (!err && (flags & O_TRUNC) && (r->in.open.open_flags & FUSE_OPEN_KILL_SUIDGID))
		err = fs_kill_priv(fd, r->hdr.gid);
	if (err) {
		close(fd);
		return err;
	}
add:
	err = fsh_add(&s->handles, fd, fs_file_kind(s, ino->dev, flags), parkable ? &park : NULL,
		      &oo.fh);
	if (err)
		return err;
	oo.open_flags = fs_open_flags(s);
	err = fs_out_put(o, &oo, sizeof(oo));
	if (err && fsh_release(&s->handles, oo.fh, false))
		err = -EIO;
	return err;
}

int fs_op_release(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	return fsh_release(&s->handles, r->in.release.fh, false);
}

int fs_op_flush(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	/* Nothing buffered here and no POSIX locks to drop (they live in the guest kernel). */
	struct fsh_handle *h = fsh_get(&s->handles, r->in.flush.fh, false);

	if (!h)
		return -EBADF;
	fsh_put(&s->handles, h);
	return 0;
}

int fs_op_fsync(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	struct fsh_handle *h = fsh_get(&s->handles, r->in.fsync.fh, false);
	int err = 0;

	if (!h)
		return -EBADF;
	if (((r->in.fsync.fsync_flags & FUSE_FSYNC_FDATASYNC) ? fdatasync(h->fd) : fsync(h->fd)) < 0)
		err = -errno;
	fsh_put(&s->handles, h);
	return err;
}

int fs_op_fallocate(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	const struct fuse_fallocate_in *in = &r->in.fallocate;
	struct fsh_handle *h;
	int err = 0;

	if (s->readonly)
		return -EROFS;
	if (in->offset > INT64_MAX || in->length > INT64_MAX)
		return -EINVAL;
	h = fsh_get(&s->handles, in->fh, false);
	if (!h)
		return -EBADF;
	if (fallocate(h->fd, (int)in->mode, (off_t)in->offset, (off_t)in->length) < 0)
		err = -errno;
	fsh_put(&s->handles, h);
	return err;
}

int fs_op_lseek(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	const struct fuse_lseek_in *in = &r->in.lseek;
	struct fuse_lseek_out out;
	struct fsh_handle *h;
	off_t pos;

	/* The guest kernel resolves SET/CUR/END itself; only the sparse-file queries come here. */
	if (in->whence != SEEK_DATA && in->whence != SEEK_HOLE)
		return -EINVAL;
	if (in->offset > INT64_MAX)
		return -ENXIO;
	h = fsh_get(&s->handles, in->fh, false);
	if (!h)
		return -EBADF;
	/* The fd's position is not used by anything else (all I/O is positioned). */
	pos = lseek(h->fd, (off_t)in->offset, (int)in->whence);
	fsh_put(&s->handles, h);
	if (pos < 0)
		return -errno;
	out.offset = (uint64_t)pos;
	return fs_out_put(o, &out, sizeof(out));
}

int fs_op_copy_file_range(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	const struct fuse_copy_file_range_in *in = &r->in.copy_file_range;
	struct fsh_handle *hin, *hout;
	struct fuse_write_out out = { 0 };
	off_t off_in, off_out;
	ssize_t n;
	int err = 0;

	if (s->readonly)
		return -EROFS;
	if (in->off_in > INT64_MAX || in->off_out > INT64_MAX || in->flags)
		return -EINVAL;
	hin = fsh_get(&s->handles, in->fh_in, false);
	hout = fsh_get(&s->handles, in->fh_out, false);
	if (!hin || !hout) {
		err = -EBADF;
		goto out;
	}
	off_in = (off_t)in->off_in;
	off_out = (off_t)in->off_out;
	/* The reply's size is 32 bits: copy at most 1 GiB per request, the guest loops. */
	n = copy_file_range(hin->fd, &off_in, hout->fd, &off_out,
			    in->len > (1u << 30) ? (1u << 30) : (size_t)in->len, 0);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	out.size = (uint32_t)n;
	err = fs_out_put(o, &out, sizeof(out));
out:
	fsh_put(&s->handles, hin);
	fsh_put(&s->handles, hout);
	return err;
}

int fs_io_begin(struct fs_server *s, const struct fuse_req *r, struct fsh_handle **hp)
{
	bool is_write = r->hdr.opcode == FUSE_WRITE;
	struct fsh_handle *h;
	uint64_t off;
	uint32_t size;
	int err;

	if (r->hdr.opcode != FUSE_READ && !is_write)
		return -EINVAL;
	err = fs_thread_prepare(s);
	if (err)
		return err;
	if (!__atomic_load_n(&s->initialized, __ATOMIC_ACQUIRE))
		return -EIO;
	if (is_write && s->readonly)
		return -EROFS;
	off = is_write ? r->in.write.offset : r->in.read.offset;
	size = is_write ? r->in.write.size : r->in.read.size;
	if (size > FS_MAX_IO || off > INT64_MAX || off + size > (uint64_t)INT64_MAX)
		return -EINVAL;
	h = fsh_get(&s->handles, is_write ? r->in.write.fh : r->in.read.fh, false);
	if (!h)
		return -EBADF;
	*hp = h;
	return 0;
}

void fs_io_end(struct fs_server *s, struct fsh_handle *h)
{
	fsh_put(&s->handles, h);
}

int fs_write_prepare(struct fs_server *s, const struct fuse_req *r, const struct fsh_handle *h,
		     bool here)
{
	bool kill = r->in.write.write_flags & FUSE_WRITE_KILL_SUIDGID;
	int err = here ? fs_creds_write_here(s, r->hdr.uid, r->hdr.gid, kill) : fs_creds_fsetid_keep(s);

	if (err < 0)
		return err;
	if (!kill || err == FS_CREDS_KERNEL_KILLS)
		return 0;
	/* The writer lacks CAP_FSETID in the guest and the host kernel will not see it: drop the
	   bits before the data lands. No identity switch: the filesystem capabilities this thread
	   holds under any fsuid (fs_creds.c) change the mode of a file the caller does not own. */
	return fs_kill_priv(h->fd, r->hdr.gid);
}

/*
 * The synchronous READ/WRITE (fs_dispatch's callers that gather the bytes themselves, e.g. the
 * host FUSE mount): short transfers are continued like the device's (xfer.h), so a READ reply is
 * short only at end of file and an error after progress is the error.
 */
int fs_op_read(struct fs_server *s, const struct fuse_req *r, struct fs_out *o)
{
	struct fsh_handle *h;
	struct iovec iov;
	struct xfer x;
	size_t want = r->in.read.size;
	int err = fs_io_begin(s, r, &h);

	if (err)
		return err;
	if (want > o->cap - o->len)
		want = o->cap - o->len;
	iov.iov_base = fs_out_reserve(o, want);
	iov.iov_len = want;
	xfer_init(&x, false, &iov, 1, r->in.read.offset, want);
	while (want && xfer_sync(&x, h->fd) == XFER_MORE) {
	}
	fs_io_end(s, h);
	if (x.error)
		return x.error;
	o->len -= want - (size_t)x.done;
	return 0;
}

int fs_op_write(struct fs_server *s, const struct fuse_req *r, const void *reqbuf, size_t have,
		struct fs_out *o)
{
	struct fuse_write_out out = { 0 };
	struct fsh_handle *h;
	struct iovec iov;
	struct xfer x;
	int err;

	if (have < r->write_off + r->in.write.size)
		return -EIO; /* the payload was left in guest memory: fs_io_begin's caller writes it */
	err = fs_io_begin(s, r, &h);
	if (err)
		return err;
	err = fs_write_prepare(s, r, h, true);
	if (err) {
		fs_io_end(s, h);
		return err;
	}
	/* pwritev2 only reads it; struct iovec has no const. */
	iov.iov_base = (void *)(uintptr_t)((const char *)reqbuf + r->write_off);
	iov.iov_len = r->in.write.size;
	xfer_init(&x, true, &iov, 1, r->in.write.offset, r->in.write.size);
	while (r->in.write.size && xfer_sync(&x, h->fd) == XFER_MORE) {
	}
	fs_io_end(s, h);
	/* Like write(2): the bytes that landed, or the error when none did. */
	if (x.error && x.done == 0)
		return x.error;
	out.size = (uint32_t)x.done;
	return fs_out_put(o, &out, sizeof(out));
}
