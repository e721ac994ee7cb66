/* xfer.h: one positioned file transfer to or from a chain's buffers, carried across short completions. */
#ifndef RINGVM_XFER_H
#define RINGVM_XFER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * A readv/writev between a host file and guest buffers may move fewer bytes than asked, and on some
 * file systems it does so as a matter of course: 9p, NFS, CIFS and FUSE complete buffered I/O in
 * pieces, a file being appended to ends mid-request, a signal or a full page cache cuts a write
 * short. io_uring passes such a result on as it is. A transfer therefore goes on from where the last
 * completion stopped - file offset + done, and the same point inside the iovecs - until it is
 * complete, the file ends (a read that returns 0), or an error ends it:
 *
 *      submit readv/writev(iov, nr, offset)  <-----------------------+
 *              |                                                     |
 *      xfer_complete(x, res):  res > 0, bytes left   -> XFER_MORE ---+  (iov/offset advanced)
 *                              -EAGAIN / -EINTR      -> XFER_MORE ---+  (at most XFER_MAX_RETRIES
 *                                                                         in a row, then an error)
 *                              all bytes moved       -> XFER_DONE
 *                              read returned 0 (EOF) -> XFER_DONE, eof
 *                              write returned 0      -> XFER_DONE, error -EIO (it would never end)
 *                              other -errno          -> XFER_DONE, error (done may be > 0)
 *
 * What a device reports when error is set after some bytes moved is its protocol's business: a
 * FUSE READ cannot say "short, but not EOF" (a short reply is EOF to the guest, which then shrinks
 * its idea of the file), so it reports the error; a FUSE WRITE reports the bytes that landed, as
 * write(2) does; a block request fails as a whole.
 *
 * Pure state, no I/O, so unit tests drive it with a fake file that answers short on demand. Owned by
 * the queue worker thread handling the request.
 */
struct xfer {
	struct iovec *iov;    /* the buffers still to fill/drain: caller storage, advanced in place */
	unsigned int nr;
	uint64_t offset;      /* file offset of iov[0] */
	uint64_t left;        /* bytes still to move */
	uint64_t done;        /* bytes moved */
	unsigned int retries; /* EAGAIN/EINTR answers in a row, with no byte moved in between */
	bool is_write;        /* buffers -> file */
	bool eof;             /* a read returned 0 with bytes left */
	int error;            /* 0, or the -errno that ended the transfer */
};

/*
 * A file answering EAGAIN (or EINTR) again and again must not keep a queue worker busy forever: after
 * this many in a row the transfer ends with that error.
 */
#define XFER_MAX_RETRIES 64

enum xfer_step {
	XFER_MORE, /* submit again with x->iov, x->nr, x->offset */
	XFER_DONE, /* finished: x->done bytes moved; x->eof / x->error say why it stopped early */
};

/* Start a transfer of len bytes described by iov[0 .. nr) at file offset `offset`. */
void xfer_init(struct xfer *x, bool is_write, struct iovec *iov, unsigned int nr, uint64_t offset,
	       uint64_t len);

/*
 * Account one completion: res is what readv/writev (or io_uring's CQE) returned, bytes or -errno.
 * Returns what to do next (diagram above). A result larger than what was asked counts as what was
 * asked. Calling it after XFER_DONE returns XFER_DONE and changes nothing.
 */
enum xfer_step xfer_complete(struct xfer *x, int res);

/* True once xfer_complete() returned XFER_DONE. */
static inline bool xfer_finished(const struct xfer *x)
{
	return x->left == 0 || x->eof || x->error;
}

/*
 * True for the f_type of a file system on local storage (ext2/3/4, XFS, btrfs, F2FS, tmpfs): a
 * transfer there waits on a local device or page-cache copies only, never on a network or another
 * process, so a queue worker may make one on its own thread (virtio-fs's buffered writes, the
 * O_DIRECT transfers of a queue with nothing else to do). NFS, CIFS, FUSE, 9p, overlayfs: false.
 */
bool xfer_local_magic(long f_type);
/* xfer_local_magic() of the file system fd is on; false when fstatfs fails. */
bool xfer_fd_local(int fd);

/*
 * One preadv2/pwritev2 (with flags, RWF_*) on fd at the transfer's position, into or from its
 * buffers, on the calling thread: bytes moved, or -errno. Accounts nothing (xfer_complete does).
 */
int xfer_move(const struct xfer *x, int fd, int flags);

/*
 * Fill sqe with the transfer's next piece on fd, with rw_flags (RWF_*): a READ or WRITE when its
 * buffers are one piece, a READV or WRITEV otherwise. A single buffer needs no iovec for io_uring to
 * copy in and check (perf, 4 KiB cached reads at depth 64: ~2 % of the worker's time).
 */
struct io_uring_sqe;
void xfer_prep_sqe(const struct xfer *x, struct io_uring_sqe *sqe, int fd, int rw_flags);

/*
 * Move the next piece synchronously on the calling thread (preadv2/pwritev2 on fd) and account it:
 * for a file or kernel that refuses the operation through io_uring (-EOPNOTSUPP). Returns like
 * xfer_complete().
 */
enum xfer_step xfer_sync(struct xfer *x, int fd);

/*
 * One attempt on the calling thread that does not wait for the disk (preadv2/pwritev2 with
 * RWF_NOWAIT; a missing page may start readahead, as io_uring's own first try does): it moves what
 * the page cache can give or take at once. True when that finished the transfer (all bytes
 * moved, or end of file); false leaves the rest, from where it stopped, to the ring: nothing could
 * move without waiting (EAGAIN), the file refuses RWF_NOWAIT (EOPNOTSUPP), or another error, which
 * the ring's attempt then reports. Never counts a retry.
 */
bool xfer_try_nowait(struct xfer *x, int fd);

#endif
