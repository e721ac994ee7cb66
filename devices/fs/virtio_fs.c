/* virtio_fs.c: the virtio-fs device: FUSE requests from the queues, READ/WRITE as io_uring I/O on guest memory. */
#define _GNU_SOURCE
#include "devices/fs/virtio_fs.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/virtio_ids.h>

#include "devices/fs/fs_budget.h"
#include "devices/fs/fs_close.h"
#include "devices/virtio/virtio.h"
#include "devices/virtio/xfer.h"

/*
 * Queues (virtio 1.2 5.11.2): vq0 is the hiprio queue (FORGET, BATCH_FORGET, INTERRUPT), vq1..N the
 * request queues; no notification queue (VIRTIO_FS_F_NOTIFICATION is not offered). Every queue runs
 * the same handler on its own worker thread and io_uring.
 *
 * Data path: READ and WRITE become one readv/writev SQE on the chain's guest buffers (vq_*_iov), so
 * bytes move between the host file and guest memory with no copy, and the worker keeps popping
 * other chains while they run. On local storage some are one preadv2/pwritev2 on this thread
 * instead, on the same guest buffers (fs_io_inline; fs_server.root_local says why): a buffered
 * WRITE, which io_uring would hand to its own thread pool, and an O_DIRECT transfer while the
 * queue has nothing else to do. A buffered READ there first copies what the page cache holds at
 * once (RWF_NOWAIT: never waits for the disk, xfer_try_nowait) and hands only the rest to the ring:
 * the same non-blocking try io_uring makes inside the submit, without its SQE and CQE; for one
 * cached 4 KiB read the ring's SQE, submission and CQE cost more than the one system call. Not
 * when the queue holds enough for slices of two or more (vq_worker_batching): one submit for the
 * slice then costs less than a system call each (pace.h: PACE_RING_SLICE, with the figures).
 * FSYNC/FSYNCDIR also go to io_uring: they can take milliseconds.
 * Everything else (lookups, attributes, directory entries, xattrs) is answered inline from a
 * per-queue scratch buffer: each is one or two short system calls that need the request's
 * credentials and a follow-up in our tables (inode insert, handle entry), so an io_uring round trip
 * would only add latency. Requests that block for long on a healthy host do not exist among them.
 */

#define FS_QUEUE_SIZE 1024
/* A 1 MiB READ/WRITE is 256 page descriptors plus the FUSE headers (the driver's
   FUSE_HEADER_OVERHEAD is 4); a little room on top. */
#define FS_MAX_SEGS 272
/* Largest non-WRITE request (SETXATTR: 64 KiB value + name) and reply (GETXATTR, READDIR). */
#define FS_SCRATCH (128 * 1024 + 4096)

struct fs_scratch {
	uint8_t in[FS_SCRATCH];
	uint8_t out[FS_SCRATCH];
};

struct virtio_fs {
	struct virtio_dev vdev;
	struct fs_server srv;
	struct virtio_fs_config config; /* little-endian, immutable after create */
	/* One per queue, used only by that queue's worker thread (indexed by queue index). */
	struct fs_scratch *scratch;
};

/* Per-request state (vq_req.priv) for requests that wait on io_uring. Worker thread only. */
struct fs_io {
	uint64_t unique;
	uint32_t opcode;
	struct fsh_handle *h;
	bool queued_write;   /* a WRITE counted by fs_write_queued() until it ends (priv starts zeroed) */
	struct xfer xfer;    /* READ/WRITE: the transfer, its buffers inside vq_req.io_iov */
	struct vq_writer wr; /* positioned at the reply header */
};

static struct virtio_fs *fs_of(struct virtio_dev *vdev)
{
	return (struct virtio_fs *)((char *)vdev - offsetof(struct virtio_fs, vdev));
}

static void fs_config_read(struct virtio_dev *vdev, uint32_t offset, void *data, uint32_t len)
{
	/* The transport checked offset + len <= config_size. */
	memcpy(data, (const uint8_t *)&fs_of(vdev)->config + offset, len);
}

static int fs_activate(struct virtio_dev *vdev, uint64_t features)
{
	return 0;
}

/* Write a header-only or header+body reply through the writer; returns bytes written (0 if none fit). */
static uint32_t fs_put_reply(struct vq_writer *wr, const void *reply, size_t len)
{
	if (len == 0 || vq_writer_write(wr, reply, len))
		return 0;
	return (uint32_t)len;
}

static void fs_finish_error(struct vq_worker *w, struct vq_req *vreq, struct vq_writer *wr,
			    uint64_t unique, int err)
{
	struct fuse_out_header h = { .len = sizeof(h), .error = err, .unique = unique };

	vq_worker_done(w, vreq, fs_put_reply(wr, &h, sizeof(h)));
}

static bool fs_submit_rw(struct virtio_fs *fs, struct vq_worker *w, struct vq_req *vreq)
{
	struct fs_io *io = vreq->priv;
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, vreq);

	if (!sqe)
		return false;
	xfer_prep_sqe(&io->xfer, sqe, io->h->fd, 0);
	return true;
}

/*
 * Finish a READ/WRITE/FSYNC: reply and drop the handle. A WRITE that failed after some bytes landed
 * reports those bytes, as write(2) does (the guest's next write sees the error). A READ cannot: a
 * short READ reply means end of file to the guest, which would then shrink the file in its page
 * cache, so an error after progress is reported as the error.
 */
static void fs_io_finish(struct virtio_fs *fs, struct vq_worker *w, struct vq_req *vreq, int err)
{
	struct fs_io *io = vreq->priv;
	struct fuse_out_header h = { .unique = io->unique };
	uint32_t written = 0;

	fs_io_end(&fs->srv, io->h);
	io->h = NULL;
	if (io->queued_write) {
		fs_write_ended();
		io->queued_write = false;
	}
	if (err && (io->opcode != FUSE_WRITE || io->xfer.done == 0)) {
		fs_finish_error(w, vreq, &io->wr, io->unique, err);
		return;
	}
	if (io->opcode == FUSE_READ) {
		/* The data is already in place after the header slot. */
		h.len = (uint32_t)(sizeof(h) + io->xfer.done);
		if (vq_writer_write(&io->wr, &h, sizeof(h)) == 0)
			written = h.len;
	} else if (io->opcode == FUSE_WRITE) {
		struct {
			struct fuse_out_header h;
			struct fuse_write_out wo;
		} rep = { .h = { .len = sizeof(rep), .unique = io->unique },
			  .wo = { .size = (uint32_t)io->xfer.done } };

		written = fs_put_reply(&io->wr, &rep, sizeof(rep));
	} else {
		h.len = sizeof(h);
		written = fs_put_reply(&io->wr, &h, sizeof(h));
	}
	vq_worker_done(w, vreq, written);
}

/* Is this READ/WRITE on h made here, on the queue's thread (fs_server.root_local says when)? */
static bool fs_io_inline(struct vq_worker *w, const struct fsh_handle *h, bool is_write)
{
	if (h->kind == FSH_FILE_LOCAL)
		return is_write;
	return h->kind == FSH_FILE_LOCAL_DIRECT && vq_worker_alone(w);
}

/* READ: readv straight into the guest's buffers after the (later written) reply header. */
static int fs_start_read(struct virtio_fs *fs, struct vq_worker *w, struct vq_req *vreq,
			 const struct fuse_req *r)
{
	struct fs_io *io = vreq->priv;
	struct vq_writer data;
	size_t room, len;
	unsigned int nr;
	int err;

	if (vq_writer_remaining(&io->wr) < sizeof(struct fuse_out_header)) {
		vq_worker_done(w, vreq, 0); /* nowhere to put even an error */
		return VQ_REQ_PENDING;
	}
	err = fs_io_begin(&fs->srv, r, &io->h);
	if (err) {
		fs_finish_error(w, vreq, &io->wr, io->unique, err);
		return VQ_REQ_PENDING;
	}
	data = io->wr;
	if (vq_writer_skip(&data, sizeof(struct fuse_out_header))) {
		fs_io_finish(fs, w, vreq, -EIO);
		return VQ_REQ_PENDING;
	}
	room = vq_writer_remaining(&data);
	len = r->in.read.size < room ? r->in.read.size : room;
	if (vq_writer_iov(&data, len, vreq->io_iov, vreq->io_iov_cap, &nr)) {
		fs_io_finish(fs, w, vreq, -EINVAL);
		return VQ_REQ_PENDING;
	}
	xfer_init(&io->xfer, false, vreq->io_iov, nr, r->in.read.offset, len);
	if (len == 0) {
		fs_io_finish(fs, w, vreq, 0);
		return VQ_REQ_PENDING;
	}
	if (fs_io_inline(w, io->h, false)) {
		while (xfer_sync(&io->xfer, io->h->fd) == XFER_MORE) {
		}
		fs_io_finish(fs, w, vreq, io->xfer.error);
		return VQ_REQ_PENDING;
	}
	/* What the page cache holds, copied now; the rest goes on through the ring. */
	if (io->h->kind == FSH_FILE_LOCAL && !vq_worker_batching(w) &&
	    xfer_try_nowait(&io->xfer, io->h->fd)) {
		fs_io_finish(fs, w, vreq, io->xfer.error);
		return VQ_REQ_PENDING;
	}
	if (!fs_submit_rw(fs, w, vreq)) {
		fs_io_end(&fs->srv, io->h);
		io->h = NULL;
		return VQ_REQ_BUSY;
	}
	return VQ_REQ_PENDING;
}

/* WRITE: writev straight from the guest's buffers that follow fuse_write_in. */
static int fs_start_write(struct virtio_fs *fs, struct vq_worker *w, struct vq_req *vreq,
			  const struct fuse_req *r)
{
	struct fs_io *io = vreq->priv;
	struct vq_reader rd;
	unsigned int nr;
	bool here;
	int err;

	err = fs_io_begin(&fs->srv, r, &io->h);
	if (err) {
		fs_finish_error(w, vreq, &io->wr, io->unique, err);
		return VQ_REQ_PENDING;
	}
	here = fs_io_inline(w, io->h, true);
	err = fs_write_prepare(&fs->srv, r, io->h, here);
	if (err) {
		fs_io_finish(fs, w, vreq, err);
		return VQ_REQ_PENDING;
	}
	vq_reader_init(&rd, &vreq->chain);
	if (vq_reader_skip(&rd, r->write_off) ||
	    vq_reader_iov(&rd, r->in.write.size, vreq->io_iov, vreq->io_iov_cap, &nr)) {
		fs_io_finish(fs, w, vreq, -EINVAL);
		return VQ_REQ_PENDING;
	}
	xfer_init(&io->xfer, true, vreq->io_iov, nr, r->in.write.offset, r->in.write.size);
	if (r->in.write.size == 0) {
		fs_io_finish(fs, w, vreq, 0);
		return VQ_REQ_PENDING;
	}
	if (here) {
		while (xfer_sync(&io->xfer, io->h->fd) == XFER_MORE) {
		}
		fs_io_finish(fs, w, vreq, io->xfer.error);
		return VQ_REQ_PENDING;
	}
	if (!fs_submit_rw(fs, w, vreq)) {
		fs_io_end(&fs->srv, io->h);
		io->h = NULL;
		return VQ_REQ_BUSY;
	}
	fs_write_queued();
	io->queued_write = true;
	return VQ_REQ_PENDING;
}

static int fs_start_fsync(struct virtio_fs *fs, struct vq_worker *w, struct vq_req *vreq,
			  const struct fuse_req *r)
{
	struct fs_io *io = vreq->priv;
	bool dir = r->hdr.opcode == FUSE_FSYNCDIR;
	struct io_uring_sqe *sqe;

	io->h = fsh_get(&fs->srv.handles, r->in.fsync.fh, dir);
	if (!io->h) {
		fs_finish_error(w, vreq, &io->wr, io->unique, -EBADF);
		return VQ_REQ_PENDING;
	}
	sqe = vq_worker_get_sqe(w, vreq);
	if (!sqe) {
		fsh_put(&fs->srv.handles, io->h);
		io->h = NULL;
		return VQ_REQ_BUSY;
	}
	io_uring_prep_fsync(sqe, io->h->fd,
			    (r->in.fsync.fsync_flags & FUSE_FSYNC_FDATASYNC) ? IORING_FSYNC_DATASYNC : 0);
	return VQ_REQ_PENDING;
}

/* The server's fds close on the queue's ring (fs_close.h). */
static void fs_close_on_ring(void *w, int fd)
{
	vq_worker_close_fd(w, fd);
}

static int fs_handle(struct virtio_dev *vdev, struct vq_worker *w, struct vq_req *vreq)
{
	struct virtio_fs *fs = fs_of(vdev);
	struct fs_scratch *sc = &fs->scratch[vq_worker_queue_index(w)];
	struct fs_io *io = vreq->priv;
	struct fuse_decode_ctx ctx;
	struct fuse_in_header hdr;
	struct vq_reader rd;
	struct fuse_req r;
	size_t total = vreq->chain.readable_len, have, len;
	int err;

	vq_reader_init(&rd, &vreq->chain);
	vq_writer_init(&io->wr, &vreq->chain);
	/* Read the header once, then decide how much to gather: a WRITE's payload stays put. */
	if (vq_reader_read(&rd, &hdr, sizeof(hdr))) {
		vq_worker_done(w, vreq, 0); /* not even a header: nothing to answer */
		return VQ_REQ_PENDING;
	}
	memcpy(sc->in, &hdr, sizeof(hdr));
	have = total;
	if (hdr.opcode == FUSE_WRITE)
		have = sizeof(hdr) + sizeof(struct fuse_write_in);
	if (have > total)
		have = total;
	if (have > sizeof(sc->in))
		have = sizeof(sc->in);
	if (vq_reader_read(&rd, sc->in + sizeof(hdr), have - sizeof(hdr))) {
		vq_worker_done(w, vreq, 0);
		return VQ_REQ_PENDING;
	}
	fs_server_decode_ctx(&fs->srv, &ctx);
	err = fuse_decode(sc->in, have, total, &ctx, &r);
	io->unique = hdr.unique;
	io->opcode = hdr.opcode;
	if (err) {
		if (fuse_opcode_no_reply(hdr.opcode))
			vq_worker_done(w, vreq, 0);
		else
			fs_finish_error(w, vreq, &io->wr, hdr.unique, err == -E2BIG ? -EINVAL : err);
		return VQ_REQ_PENDING;
	}
	switch (r.hdr.opcode) {
	case FUSE_READ:
		return fs_start_read(fs, w, vreq, &r);
	case FUSE_WRITE:
		return fs_start_write(fs, w, vreq, &r);
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
		if (__atomic_load_n(&fs->srv.initialized, __ATOMIC_ACQUIRE))
			return fs_start_fsync(fs, w, vreq, &r);
		break;
	default:
		break;
	}
	len = vq_writer_remaining(&io->wr);
	if (len > sizeof(sc->out))
		len = sizeof(sc->out);
	len = fs_dispatch(&fs->srv, &r, sc->in, have, sc->out, len);
	vq_worker_done(w, vreq, fs_put_reply(&io->wr, sc->out, len));
	return VQ_REQ_PENDING;
}

/*
 * A CQE of a READ/WRITE: continue a short transfer where it stopped (xfer.h) until the request is
 * whole, the file ends or an error ends it; a file the ring cannot serve (-EOPNOTSUPP) is served
 * synchronously on this thread instead.
 */
static void fs_complete(struct virtio_dev *vdev, struct vq_worker *w, struct vq_req *vreq, int res)
{
	struct virtio_fs *fs = fs_of(vdev);
	struct fs_io *io = vreq->priv;
	struct xfer *x = &io->xfer;
	enum xfer_step step;

	if (io->opcode != FUSE_READ && io->opcode != FUSE_WRITE) {
		fs_io_finish(fs, w, vreq, res < 0 ? res : 0);
		return;
	}
	if (res == -EOPNOTSUPP && x->done == 0) {
		do
			step = xfer_sync(x, io->h->fd);
		while (step == XFER_MORE);
	} else {
		step = xfer_complete(x, res);
	}
	if (step == XFER_MORE && fs_submit_rw(fs, w, vreq))
		return;
	/* No SQE for the rest (cannot happen with one SQE per request in flight): an error, never
	   a silent short transfer. */
	fs_io_finish(fs, w, vreq, step == XFER_MORE ? -EIO : x->error);
}

/* Workers are stopped: the guest will INIT again and knows none of our nodeids or handles. */
static void fs_reset(struct virtio_dev *vdev)
{
	fs_server_reset(&fs_of(vdev)->srv);
}

static const struct virtio_dev_ops fs_dev_ops = {
	.config_read = fs_config_read,
	.activate = fs_activate,
	.reset = fs_reset,
};

/* Each queue's thread, at its creation: its own umask and groups before it is confined (the
   filters deny unshare and setgroups), and the server's fds it drops close on its ring. */
static int fs_thread_init(struct virtio_dev *vdev, struct vq_worker *w)
{
	fs_close_on(fs_close_on_ring, w);
	return fs_thread_prepare(&fs_of(vdev)->srv);
}

static const struct vq_handler_ops fs_queue_ops = {
	.handle = fs_handle,
	.complete = fs_complete,
	.thread_init = fs_thread_init,
};

/*
 * Everything a virtio-fs queue's io_uring may do (devices/virtio/uring.h; the worker adds its
 * eventfd READ and ASYNC_CANCEL): READV/WRITEV for FUSE_READ/FUSE_WRITE (fs_submit_rw), or
 * READ/WRITE when the guest's buffer is one piece (xfer_prep_sqe); FSYNC for FUSE_FSYNC/FUSE_FSYNCDIR
 * (fs_start_fsync), CLOSE for the fds a FORGET or RELEASE drops (fs_close.h). No SQE flags. Every
 * other request is served inline by system calls of the worker thread, which its seccomp filter
 * sees.
 */
static const uint8_t fs_ring_ops[] = {
	IORING_OP_READV,
	IORING_OP_WRITEV,
	IORING_OP_READ,
	IORING_OP_WRITE,
	IORING_OP_FSYNC,
	IORING_OP_CLOSE,
};

const struct uring_rules fs_ring_rules = {
	.ops = fs_ring_ops,
	.nr_ops = sizeof(fs_ring_ops) / sizeof(fs_ring_ops[0]),
	.sqe_flags = 0,
};

/* The most file descriptors ringvm asks for: what virtiofsd asks for too (fs.nr_open's default). */
#define FS_NOFILE_WANT (1u << 20)

/*
 * Raise the fd limit for the O_PATH fds the inode table keeps: the hard limit too when we may (root,
 * CAP_SYS_RESOURCE), else the soft limit up to the hard one. Returns the limit the server may use.
 */
static size_t fs_fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < FS_NOFILE_WANT) {
		struct rlimit want = { FS_NOFILE_WANT, FS_NOFILE_WANT };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return 1024;
	}
	/* Leave room for the rest of the VMM (other devices, eventfds, io_urings). */
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 20))
		return 1u << 20;
	return rl.rlim_cur > 2048 ? (size_t)rl.rlim_cur - 1024 : (size_t)rl.rlim_cur / 2;
}

int virtio_fs_create(const struct fs_config *cfg, struct virtio_fs **out)
{
	struct virtio_fs *fs;
	struct virtio_dev *v;
	unsigned int queues = cfg->queues ? cfg->queues : 1;
	int err;

	if (queues > FS_MAX_QUEUES)
		return -EINVAL;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	size_t fds = fs_fd_budget();
	struct fs_limits lim;
	fs_budget_limits(&lim);
	if (lim.max_fds == SIZE_MAX) {
		/* One fd budget for every share (unless --fs-limits chose one). */
		struct fs_limits want = { .max_fds = fds };
		fs_budget_configure(&want);
	}
	err = fs_server_create(&fs->srv, cfg->host_dir, cfg->readonly, cfg->cache, fds);
	if (err)
		goto err_free;
	fs->srv.allow_dev = cfg->dev;
	fs->srv.allow_suid = cfg->suid;
	fs->srv.allow_direct_io = cfg->allow_direct_io;
	fs->srv.xattr = cfg->xattr;
	fs->scratch = calloc(queues + 1, sizeof(*fs->scratch));
	if (!fs->scratch) {
		err = -ENOMEM;
		goto err_srv;
	}
	/* The tag is UTF-8 without a NUL when it fills all 36 bytes. */
	memcpy(fs->config.tag, cfg->tag, strnlen(cfg->tag, sizeof(fs->config.tag)));
	fs->config.num_request_queues = htole32(queues);

	v = &fs->vdev;
	v->device_id = VIRTIO_ID_FS;
	v->features = 0;
	v->config_size = sizeof(fs->config);
	v->nr_queues = queues + 1;
	v->queue_max_size = FS_QUEUE_SIZE;
	v->max_segs = FS_MAX_SEGS;
	v->req_priv_size = sizeof(struct fs_io);
	v->poll_us = cfg->poll_us;
	v->ring_rules = &fs_ring_rules;
	v->ops = &fs_dev_ops;
	v->queue_ops = &fs_queue_ops;
	*out = fs;
	return 0;

err_srv:
	fs_server_destroy(&fs->srv);
err_free:
	free(fs);
	return err;
}

struct virtio_dev *virtio_fs_virtio_dev(struct virtio_fs *fs)
{
	return &fs->vdev;
}

void virtio_fs_destroy(struct virtio_fs *fs)
{
	if (!fs)
		return;
	free(fs->scratch);
	fs_server_destroy(&fs->srv);
	free(fs);
}
