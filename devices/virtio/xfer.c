/* xfer.c: a file transfer to or from guest buffers, continued across short completions (xfer.h). */
#define _GNU_SOURCE
#include "devices/virtio/xfer.h"

#include <errno.h>
#include <sys/statfs.h>
#include <sys/uio.h>

#include <linux/magic.h>

#include <liburing.h>

/* Drop the first n bytes of the iovecs in place: consumed entries, then leading empty ones. */
static void xfer_iov_advance(struct iovec **iov, unsigned int *nr, size_t n)
{
	while (*nr && n) {
		struct iovec *v = *iov;
		if (n < v->iov_len) {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= n;
			return;
		}
		n -= v->iov_len;
		(*iov)++;
		(*nr)--;
	}
	/* Drop leading empty entries so a continued readv/writev never starts with nothing to do. */
	while (*nr && (*iov)->iov_len == 0) {
		(*iov)++;
		(*nr)--;
	}
}

void xfer_init(struct xfer *x, bool is_write, struct iovec *iov, unsigned int nr, uint64_t offset,
	       uint64_t len)
{
	*x = (struct xfer){
		.iov = iov,
		.nr = nr,
		.offset = offset,
		.left = len,
		.is_write = is_write,
	};
}

enum xfer_step xfer_complete(struct xfer *x, int res)
{
	if (xfer_finished(x))
		return XFER_DONE;
	if (res == -EAGAIN || res == -EINTR) {
		if (++x->retries > XFER_MAX_RETRIES) {
			x->error = res;
			return XFER_DONE;
		}
		return XFER_MORE;
	}
	if (res < 0) {
		x->error = res;
		return XFER_DONE;
	}
	if (res == 0) {
		/* read(2) at end of file; a write that moved nothing would be resubmitted forever. */
		if (x->is_write)
			x->error = -EIO;
		else
			x->eof = true;
		return XFER_DONE;
	}
	uint64_t n = (uint64_t)res < x->left ? (uint64_t)res : x->left;
	x->done += n;
	x->left -= n;
	x->offset += n;
	x->retries = 0;
	xfer_iov_advance(&x->iov, &x->nr, (size_t)n);
	if (x->nr == 0)
		x->left = 0; /* the buffers ran out first: nothing more can move */
	return x->left ? XFER_MORE : XFER_DONE;
}

bool xfer_local_magic(long f_type)
{
	switch (f_type) {
	case EXT4_SUPER_MAGIC: /* ext2, ext3 and ext4 share it */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
	case TMPFS_MAGIC:
		return true;
	default:
		return false;
	}
}

bool xfer_fd_local(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && xfer_local_magic(sf.f_type);
}

int xfer_move(const struct xfer *x, int fd, int flags)
{
	ssize_t n = x->is_write ? pwritev2(fd, x->iov, (int)x->nr, (off_t)x->offset, flags)
				: preadv2(fd, x->iov, (int)x->nr, (off_t)x->offset, flags);

	if (n < 0)
		return -errno;
	/* One call moves at most what the iovecs hold (below 2^32 here: FS_MAX_IO, blk's 2^32 cap). */
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

void xfer_prep_sqe(const struct xfer *x, struct io_uring_sqe *sqe, int fd, int rw_flags)
{
	if (x->nr == 1 && x->is_write)
		io_uring_prep_write(sqe, fd, x->iov[0].iov_base, (unsigned int)x->iov[0].iov_len,
				    x->offset);
	else if (x->nr == 1)
		io_uring_prep_read(sqe, fd, x->iov[0].iov_base, (unsigned int)x->iov[0].iov_len,
				   x->offset);
	else if (x->is_write)
		io_uring_prep_writev(sqe, fd, x->iov, x->nr, x->offset);
	else
		io_uring_prep_readv(sqe, fd, x->iov, x->nr, x->offset);
	sqe->rw_flags = rw_flags;
}

enum xfer_step xfer_sync(struct xfer *x, int fd)
{
	if (xfer_finished(x))
		return XFER_DONE;
	return xfer_complete(x, xfer_move(x, fd, 0));
}

bool xfer_try_nowait(struct xfer *x, int fd)
{
	/* Again after a short piece: a read that stopped at the end of the file learns it here (0),
	   not through a round on the ring. Each pass moves bytes or ends the loop. */
	while (!xfer_finished(x)) {
		int n = xfer_move(x, fd, RWF_NOWAIT);

		if (n < 0 || (n == 0 && x->is_write))
			return false;
		(void)xfer_complete(x, n);
	}
	return true;
}
