/* blk.c: virtio-blk on a host file: config space, and requests as io_uring I/O straight to guest memory. */
#define _GNU_SOURCE
#include "devices/blk/blk.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/virtio_ids.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/blk/blk_req.h"
#include "devices/virtio/virtio.h"
#include "devices/virtio/xfer.h"

#define BLK_QUEUE_SIZE 256
/* Linux puts the header and the status in descriptors of their own: data gets the rest. */
#define BLK_SEG_MAX (BLK_QUEUE_SIZE - 2)
/* One discard / write-zeroes segment of at most 1 GiB keeps a single fallocate short. */
#define BLK_MAX_RANGE_SECTORS (1u << 21)

struct blk_dev {
	struct virtio_dev vdev;
	int fd;		 /* O_DIRECT when direct=on */
	int fd_buffered; /* the same file without O_DIRECT, for unaligned I/O; == fd otherwise */
	uint32_t dio_align;
	struct blk_limits lim;
	char id[BLK_ID_MAX];
	struct virtio_blk_config config; /* little-endian, immutable after create */
	/* The driver did not negotiate FLUSH, so it has no way to ask for durability: every write
	   is durable when completed (RWF_DSYNC). Set at activation, before the workers start. */
	bool writethrough;
	/*
	 * On local storage (xfer_fd_local), some transfers are one call on the queue's thread, as
	 * virtio-fs makes them (devices/fs/fs_server.h, root_local, says why): with direct=on, a
	 * READ of a queue that holds nothing else (vq_worker_alone); with direct=off, every WRITE
	 * that need not be durable at once, which io_uring would hand to its io-wq thread pool
	 * (ext4 has no buffered NOWAIT); and every READ through the page cache (direct=off, or
	 * direct=on's unaligned fallback) first copies what the cache holds at once
	 * (read_nowait: RWF_NOWAIT, xfer_try_nowait), the rest going on through the ring. That is
	 * the try io_uring makes inside the submit anyway, without its SQE and CQE around it; a
	 * queue that holds enough for slices of two or more submits them whole instead
	 * (vq_worker_batching).
	 * Immutable after create.
	 */
	bool read_inline_alone;
	bool write_inline;
	bool read_nowait;
};

/* What WRITE_ZEROES writes when the file system cannot zero a range with fallocate. */
#define BLK_ZERO_CHUNK (64u * 1024)
static const uint8_t blk_zeroes[BLK_ZERO_CHUNK];

/* Per-request state (vq_req.priv), on the queue's worker thread only. */
struct blk_io {
	struct blk_req req;
	struct xfer xfer;      /* READ/WRITE: the transfer, its buffers inside vq_req.io_iov */
	uint32_t data_written; /* bytes put into the guest's writable buffers */
	bool buffered;	       /* I/O goes through fd_buffered */
	bool punch;	       /* WRITE_ZEROES fell back to PUNCH_HOLE */
	bool zero_write;       /* WRITE_ZEROES fell back to writing zeroes: xfer is the current chunk */
	uint64_t zero_next;    /* zero_write: bytes of the range already written before this chunk */
	bool syncing;          /* writethrough: the fdatasync after a fallocate is in flight */
};

static struct blk_dev *blk_of(struct virtio_dev *vdev)
{
	return (struct blk_dev *)((char *)vdev - offsetof(struct blk_dev, vdev));
}

static void blk_config_read(struct virtio_dev *vdev, uint32_t offset, void *data, uint32_t len)
{
	/* The transport checked offset + len <= config_size = sizeof(config). */
	memcpy(data, (const uint8_t *)&blk_of(vdev)->config + offset, len);
}

static int blk_activate(struct virtio_dev *vdev, uint64_t features)
{
	blk_of(vdev)->writethrough = !(features & (1ULL << VIRTIO_BLK_F_FLUSH));
	return 0;
}

static void blk_finish(struct vq_worker *w, struct vq_req *vreq, uint8_t status)
{
	struct blk_io *io = vreq->priv;
	vq_worker_done(w, vreq, blk_req_status(&io->req, status, io->data_written));
}

/* A READ or WRITE moved all it will (or could not go on: its bytes are not all there): its status. */
static void blk_finish_rw(struct vq_worker *w, struct vq_req *vreq)
{
	struct blk_io *io = vreq->priv;
	const struct xfer *x = &io->xfer;

	if (!x->is_write)
		io->data_written = (uint32_t)x->done;
	blk_finish(w, vreq, x->left == 0 && !x->error ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR);
}

static bool blk_aligned(const struct blk_dev *blk, const struct xfer *x)
{
	uint64_t mask = blk->dio_align - 1;
	if ((x->offset | x->left) & mask)
		return false;
	for (unsigned int i = 0; i < x->nr; i++)
		if (((uintptr_t)x->iov[i].iov_base | x->iov[i].iov_len) & mask)
			return false;
	return true;
}

/* The fd a READ/WRITE goes through: the page cache's when it is buffered or direct=off. */
static int blk_rw_fd(const struct blk_dev *blk, const struct blk_io *io)
{
	return io->buffered ? blk->fd_buffered : blk->fd;
}

/* Queue the next piece of a READ/WRITE from where the last one stopped. */
static bool blk_submit_rw(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq)
{
	struct blk_io *io = vreq->priv;
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, vreq);
	if (!sqe)
		return false;
	xfer_prep_sqe(&io->xfer, sqe, blk_rw_fd(blk, io),
		      io->xfer.is_write && blk->writethrough ? RWF_DSYNC : 0);
	return true;
}

static void blk_complete_rw(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq, int res);

/* A READ or WRITE made here (blk_dev.read_inline_alone, write_inline): the call's result is
   accounted as a completion would be, so a short transfer goes on through the ring, and EINVAL
   (go buffered) or the end of the file end as there. */
static void blk_rw_inline(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq)
{
	struct blk_io *io = vreq->priv;

	blk_complete_rw(blk, w, vreq, xfer_move(&io->xfer, blk->fd, 0));
}

static bool blk_submit_fallocate(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq)
{
	struct blk_io *io = vreq->priv;
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, vreq);
	if (!sqe)
		return false;
	int mode = FALLOC_FL_KEEP_SIZE;
	if (io->req.action == BLK_ACT_DISCARD || io->req.unmap || io->punch)
		mode |= FALLOC_FL_PUNCH_HOLE;
	else
		mode |= FALLOC_FL_ZERO_RANGE;
	io_uring_prep_fallocate(sqe, blk->fd_buffered, mode, io->req.offset, io->req.len);
	return true;
}

/*
 * WRITE_ZEROES where neither ZERO_RANGE nor PUNCH_HOLE exists (ramfs, some FUSE and network file
 * systems): write the zeroes, at most io_iov_cap * 64 KiB per writev, through the page cache (the
 * buffer is not O_DIRECT-aligned), durable like any write when the driver has no FLUSH.
 */
static bool blk_submit_zeroes(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq)
{
	struct blk_io *io = vreq->priv;
	uint64_t left = io->req.len - io->zero_next, len = 0;
	unsigned int nr = 0;

	while (nr < vreq->io_iov_cap && len < left) {
		size_t n = left - len < BLK_ZERO_CHUNK ? (size_t)(left - len) : BLK_ZERO_CHUNK;

		vreq->io_iov[nr].iov_base = (void *)(uintptr_t)blk_zeroes; /* only read */
		vreq->io_iov[nr++].iov_len = n;
		len += n;
	}
	io->zero_write = true;
	io->buffered = true;
	xfer_init(&io->xfer, true, vreq->io_iov, nr, io->req.offset + io->zero_next, len);
	return blk_submit_rw(blk, w, vreq);
}

/* Writethrough (no FLUSH negotiated): a range zeroed by fallocate is made durable before the
   request completes. */
static void blk_finish_durable(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq)
{
	struct blk_io *io = vreq->priv;
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, vreq);

	if (!sqe)
		return blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
	io->syncing = true;
	io_uring_prep_fsync(sqe, blk->fd_buffered, IORING_FSYNC_DATASYNC);
}

/* A CQE of the zero-writing fallback: the chunk goes on like any write, then the next chunk. */
static void blk_complete_zeroes(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq,
				int res)
{
	struct blk_io *io = vreq->priv;
	enum xfer_step step = xfer_complete(&io->xfer, res);

	if (step == XFER_DONE && !io->xfer.error) {
		io->zero_next += io->xfer.done;
		if (io->zero_next == io->req.len)
			return blk_finish(w, vreq, VIRTIO_BLK_S_OK);
		if (!blk_submit_zeroes(blk, w, vreq))
			blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
		return;
	}
	if (step == XFER_MORE && blk_submit_rw(blk, w, vreq))
		return;
	blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
}

static int blk_handle(struct virtio_dev *vdev, struct vq_worker *w, struct vq_req *vreq)
{
	struct blk_dev *blk = blk_of(vdev);
	struct blk_io *io = vreq->priv;
	blk_req_parse(&vreq->chain, &blk->lim, &io->req);
	int err = 0;

	switch (io->req.action) {
	case BLK_ACT_NO_STATUS:
		/* Nowhere to put a status: give the buffers back and ask for a reset (blk_req.h). */
		vq_worker_done(w, vreq, 0);
		vq_worker_fail_why(w, "a request with no writable status byte (virtio 1.x 5.2.6.1)");
		return VQ_REQ_PENDING;
	case BLK_ACT_STATUS:
		blk_finish(w, vreq, io->req.status);
		return VQ_REQ_PENDING;
	case BLK_ACT_GET_ID:
		if (vq_writer_write(&io->req.wr, blk->id, io->req.len) == 0)
			io->data_written = (uint32_t)io->req.len;
		blk_finish(w, vreq, VIRTIO_BLK_S_OK);
		return VQ_REQ_PENDING;
	case BLK_ACT_READ:
	case BLK_ACT_WRITE:
		if (io->req.len == 0) {
			blk_finish(w, vreq, VIRTIO_BLK_S_OK);
			return VQ_REQ_PENDING;
		}
		unsigned int nr;
		bool is_write = io->req.action == BLK_ACT_WRITE;
		if (is_write)
			err = vq_reader_iov(&io->req.rd, io->req.len, vreq->io_iov,
					    vreq->io_iov_cap, &nr);
		else
			err = vq_writer_iov(&io->req.wr, io->req.len, vreq->io_iov,
					    vreq->io_iov_cap, &nr);
		if (err) {
			blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
			return VQ_REQ_PENDING;
		}
		xfer_init(&io->xfer, is_write, vreq->io_iov, nr, io->req.offset, io->req.len);
		io->buffered = blk->fd != blk->fd_buffered && !blk_aligned(blk, &io->xfer);
		if (is_write ? blk->write_inline && !blk->writethrough
			     : !io->buffered && blk->read_inline_alone && vq_worker_alone(w)) {
			blk_rw_inline(blk, w, vreq);
			return VQ_REQ_PENDING;
		}
		/* What the page cache holds, copied now; the rest goes on through the ring. */
		if (!is_write && blk->read_nowait && blk_rw_fd(blk, io) == blk->fd_buffered &&
		    !vq_worker_batching(w) && xfer_try_nowait(&io->xfer, blk->fd_buffered)) {
			blk_finish_rw(w, vreq);
			return VQ_REQ_PENDING;
		}
		return blk_submit_rw(blk, w, vreq) ? VQ_REQ_PENDING : VQ_REQ_BUSY;
	case BLK_ACT_FLUSH: {
		struct io_uring_sqe *sqe = vq_worker_get_sqe(w, vreq);
		if (!sqe)
			return VQ_REQ_BUSY;
		/*
		 * FLUSH makes every write the guest has seen completed durable (5.2.6: "writes which were
		 * completed"; Linux's PREFLUSH means the same). Those writes already returned from the
		 * kernel before we published them, so an fsync issued now covers them, whichever queue
		 * carried them and whichever fd (fsync is per inode). Writes still in flight are not
		 * covered, as the spec allows. No IOSQE_IO_DRAIN: it would also wait for the ring's
		 * long-lived kick read and never start.
		 */
		io_uring_prep_fsync(sqe, blk->fd_buffered, 0);
		return VQ_REQ_PENDING;
	}
	case BLK_ACT_DISCARD:
	case BLK_ACT_WRITE_ZEROES:
		return blk_submit_fallocate(blk, w, vreq) ? VQ_REQ_PENDING : VQ_REQ_BUSY;
	}
	blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
	return VQ_REQ_PENDING;
}

/*
 * A CQE of a READ/WRITE: continue a short transfer where it stopped (xfer.h). A block request
 * succeeds whole or fails: the end of the image inside a request (the file shrank under us), an
 * error after progress or a file that keeps answering EAGAIN all give IOERR.
 */
static void blk_complete_rw(struct blk_dev *blk, struct vq_worker *w, struct vq_req *vreq, int res)
{
	struct blk_io *io = vreq->priv;
	struct xfer *x = &io->xfer;
	if (res == -EINVAL && !io->buffered && blk->fd != blk->fd_buffered) {
		/* O_DIRECT refused this shape after all: redo it through the page cache. */
		io->buffered = true;
		res = -EAGAIN;
	}
	if (xfer_complete(x, res) == XFER_MORE && blk_submit_rw(blk, w, vreq))
		return;
	blk_finish_rw(w, vreq);
}

static void blk_complete(struct virtio_dev *vdev, struct vq_worker *w, struct vq_req *vreq, int res)
{
	struct blk_dev *blk = blk_of(vdev);
	struct blk_io *io = vreq->priv;
	if (io->syncing)
		return blk_finish(w, vreq, res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK);
	switch (io->req.action) {
	case BLK_ACT_READ:
	case BLK_ACT_WRITE:
		return blk_complete_rw(blk, w, vreq, res);
	case BLK_ACT_DISCARD:
		/* Discard is a hint (5.2.6.2 allows ignoring it): a file system without holes is fine. */
		if (res < 0 && res != -EOPNOTSUPP)
			return blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
		return blk_finish(w, vreq, VIRTIO_BLK_S_OK);
	case BLK_ACT_WRITE_ZEROES:
		if (io->zero_write)
			return blk_complete_zeroes(blk, w, vreq, res);
		if (res == -EOPNOTSUPP && !io->punch && !io->req.unmap) {
			/* No ZERO_RANGE here: a punched hole reads back as zeroes too. */
			io->punch = true;
			if (!blk_submit_fallocate(blk, w, vreq))
				blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
			return;
		}
		if (res == -EOPNOTSUPP) {
			/* No way to zero a range at all: write the zeroes. */
			if (!blk_submit_zeroes(blk, w, vreq))
				blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
			return;
		}
		if (res >= 0 && blk->writethrough)
			return blk_finish_durable(blk, w, vreq);
		return blk_finish(w, vreq, res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK);
	case BLK_ACT_FLUSH:
		return blk_finish(w, vreq, res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK);
	default:
		return blk_finish(w, vreq, VIRTIO_BLK_S_IOERR);
	}
}

static const struct virtio_dev_ops blk_dev_ops = {
	.config_read = blk_config_read,
	.activate = blk_activate,
};

/*
 * Everything a blk queue's io_uring may do (devices/virtio/uring.h; the worker adds its eventfd READ
 * and ASYNC_CANCEL): READV/WRITEV for IN/OUT, or READ/WRITE when the buffer is one piece
 * (xfer_prep_sqe), writes with RWF_DSYNC when the driver has no FLUSH; FSYNC for FLUSH and for the
 * data sync of a writethrough WRITE_ZEROES/DISCARD, FALLOCATE for DISCARD (punch hole) and
 * WRITE_ZEROES (zero range). No SQE flags. GET_ID is answered inline.
 */
static const uint8_t blk_ring_ops[] = {
	IORING_OP_READV,
	IORING_OP_WRITEV,
	IORING_OP_READ,
	IORING_OP_WRITE,
	IORING_OP_FSYNC,
	IORING_OP_FALLOCATE,
};

const struct uring_rules blk_ring_rules = {
	.ops = blk_ring_ops,
	.nr_ops = sizeof(blk_ring_ops) / sizeof(blk_ring_ops[0]),
	.sqe_flags = 0,
};

static const struct vq_handler_ops blk_queue_ops = {
	.handle = blk_handle,
	.complete = blk_complete,
};

/* Size in bytes of a regular file or a block device. */
static int blk_size(int fd, uint64_t *size)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* O_DIRECT alignment of memory and offsets: what statx says, else the usual 512. */
static uint32_t blk_dio_align(int fd)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align &&
	    !(stx.stx_dio_offset_align & (stx.stx_dio_offset_align - 1))) {
		uint32_t a = stx.stx_dio_offset_align > stx.stx_dio_mem_align
				     ? stx.stx_dio_offset_align
				     : stx.stx_dio_mem_align;
		if (a && !(a & (a - 1)))
			return a;
	}
	return 512;
}

static void blk_fill_config(struct blk_dev *blk, unsigned int queues)
{
	struct virtio_blk_config *c = &blk->config;
	c->capacity = htole64(blk->lim.capacity);
	c->seg_max = htole32(BLK_SEG_MAX);
	c->blk_size = htole32(BLK_SECTOR_SIZE);
	c->num_queues = htole16((uint16_t)queues);
	c->max_discard_sectors = htole32(blk->lim.max_discard_sectors);
	c->max_discard_seg = htole32(1);
	c->discard_sector_alignment = htole32(1);
	c->max_write_zeroes_sectors = htole32(blk->lim.max_zeroes_sectors);
	c->max_write_zeroes_seg = htole32(1);
	c->write_zeroes_may_unmap = 1;
}

/* Default GET_ID: the file's base name, cut to 20 bytes (no NUL needed when full, 5.2.6). */
static void blk_default_id(const char *path, char id[BLK_ID_MAX])
{
	const char *base = strrchr(path, '/');
	base = base && base[1] ? base + 1 : path;
	size_t n = strlen(base);
	memcpy(id, base, n < BLK_ID_MAX ? n : BLK_ID_MAX);
}

int blk_create(const struct blk_config *cfg, unsigned int default_queues, struct blk_dev **out)
{
	struct blk_dev *blk = calloc(1, sizeof(*blk));
	if (!blk)
		return -ENOMEM;
	int err = blk_open(cfg);
	if (err < 0)
		goto err_free;
	blk->fd = err;
	blk->fd_buffered = blk->fd;
	if (cfg->direct) {
		struct blk_config buffered = *cfg;
		buffered.direct = false;
		err = blk_open(&buffered);
		if (err < 0)
			goto err_fd;
		blk->fd_buffered = err;
	}
	uint64_t bytes;
	err = blk_size(blk->fd, &bytes);
	if (err)
		goto err_fd;
	blk->dio_align = cfg->direct ? blk_dio_align(blk->fd) : BLK_SECTOR_SIZE;
	bool local = xfer_fd_local(blk->fd);
	blk->read_inline_alone = cfg->direct && local;
	blk->write_inline = !cfg->direct && local;
	blk->read_nowait = local;
	blk->lim.capacity = bytes / BLK_SECTOR_SIZE;
	blk->lim.readonly = cfg->readonly;
	blk->lim.max_discard_sectors = BLK_MAX_RANGE_SECTORS;
	blk->lim.max_zeroes_sectors = BLK_MAX_RANGE_SECTORS;
	if (cfg->id[0])
		memcpy(blk->id, cfg->id, strnlen(cfg->id, BLK_ID_MAX));
	else
		blk_default_id(cfg->path, blk->id);

	unsigned int queues = cfg->queues ? cfg->queues : default_queues;
	if (queues < 1)
		queues = 1;
	if (queues > BLK_MAX_QUEUES)
		queues = BLK_MAX_QUEUES;
	blk_fill_config(blk, queues);

	struct virtio_dev *v = &blk->vdev;
	v->device_id = VIRTIO_ID_BLOCK;
	v->features = (1ULL << VIRTIO_BLK_F_SEG_MAX) | (1ULL << VIRTIO_BLK_F_BLK_SIZE) |
		      (1ULL << VIRTIO_BLK_F_FLUSH) | (1ULL << VIRTIO_BLK_F_MQ) |
		      (1ULL << VIRTIO_BLK_F_DISCARD) | (1ULL << VIRTIO_BLK_F_WRITE_ZEROES);
	if (cfg->readonly)
		v->features |= 1ULL << VIRTIO_BLK_F_RO;
	v->config_size = sizeof(blk->config);
	v->nr_queues = queues;
	v->queue_max_size = BLK_QUEUE_SIZE;
	v->max_segs = BLK_QUEUE_SIZE;
	v->req_priv_size = sizeof(struct blk_io);
	v->poll_us = cfg->poll_us;
	v->ring_rules = &blk_ring_rules;
	v->ops = &blk_dev_ops;
	v->queue_ops = &blk_queue_ops;
	*out = blk;
	return 0;

err_fd:
	if (blk->fd_buffered != blk->fd)
		close(blk->fd_buffered);
	close(blk->fd);
err_free:
	free(blk);
	return err;
}

struct virtio_dev *blk_virtio_dev(struct blk_dev *blk)
{
	return &blk->vdev;
}

void blk_destroy(struct blk_dev *blk)
{
	if (!blk)
		return;
	if (blk->fd_buffered != blk->fd)
		close(blk->fd_buffered);
	close(blk->fd);
	free(blk);
}
