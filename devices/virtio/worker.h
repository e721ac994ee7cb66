/* worker.h: one thread per virtqueue, owning one io_uring, that pops chains and runs the device's I/O. */
#ifndef RINGVM_WORKER_H
#define RINGVM_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include "devices/virtio/virtq.h"

/*
 * The worker loop, on its own thread, with its own io_uring (no thread pool, no handoff):
 *
 *   arm READ(kick eventfd) and READ(stop eventfd) on the ring
 *   loop:
 *     pop chains while a request slot is free   -> ops->handle(dev, w, req)
 *     reap every CQE: kick/stop re-armed;  request CQEs -> ops->complete(dev, w, req, res)
 *     vq_publish() once; if vq_should_notify(): set the transport's interrupt status, write irqfd
 *     re-enable kicks (EVENT_IDX avail_event); if chains arrived meanwhile, loop without sleeping
 *     optional busy-poll of the avail ring for poll_us, then io_uring_submit_and_wait(1)
 *
 * The guest's kick is a KVM ioeventfd on QueueNotify (datamatch = queue index) and is read through
 * the ring (IORING_OP_READ, re-armed), so one io_uring_enter() both submits I/O and sleeps for kicks,
 * completions and stop. CQE user_data is always the worker's own tag (slot index + generation, or a
 * reserved value for kick/stop): never a guest value, so a guest cannot name a slot.
 *
 * Backpressure: when no request slot is free or the device cannot get the SQEs it needs (max_inflight
 * SQEs already in flight, or the SQ full), the chain is given back (vq_unpop) and retried after the
 * next completions; a request is never failed for lack of room.
 *
 * Driver bugs: a broken ring (vq_pop -EPROTO) or a malformed chain (-EBADMSG/-EFAULT: its buffers are
 * given back with used length 0) makes the worker stop popping and ask the transport for
 * DEVICE_NEEDS_RESET; requests in flight still complete.
 *
 * Stop (reset, device teardown): the transport writes the stop eventfd; the worker stops popping,
 * asks io_uring to cancel whatever is still in flight (ASYNC_CANCEL_ANY), waits until every request
 * has completed (its CQEs reaped and vq_worker_done() called) or one second passed, publishes, and
 * the thread exits. A request that neither completes nor cancels (a read the file system never
 * answers) is abandoned, so a reset or ringvm's exit never waits on a guest-chosen file: the device
 * gets complete(-ECANCELED) for it (vq_worker_get_sqe then returns NULL) and the kernel finishes the
 * I/O whenever it can. No pthread_cancel.
 */

struct vq_worker;
struct virtio_dev;

#define VQ_WORKER_MAX_OPS 16

/*
 * One request: a popped chain in one of the worker's slots. Owned by the worker thread; the device
 * uses it only inside its callbacks, on that thread. Slots are reused: nothing in it survives
 * vq_worker_done().
 */
struct vq_req {
	struct vq_chain chain;      /* the guest buffers (iov storage owned by the worker) */
	struct iovec *io_iov;       /* scratch for the device: max_segs iovecs, e.g. for readv/writev */
	unsigned int io_iov_cap;    /* = max_segs */
	void *priv;                 /* device per-request state, priv_size bytes, zeroed at each pop */
	unsigned int inflight;      /* SQEs submitted for this request and not yet completed */
	uint32_t slot;              /* index in the worker's slot array */
	uint32_t gen;               /* bumped at every reuse; part of the io_uring tag */
	bool busy;
};

/* What handle() returns. */
enum vq_handle_result {
	VQ_REQ_PENDING = 0, /* SQEs were queued for it (or it was completed with vq_worker_done) */
	VQ_REQ_BUSY = 1,    /* no room (vq_worker_get_sqe returned NULL before anything was queued):
			       the worker gives the chain back and retries after completions */
};

/*
 * Device callbacks for a queue. Both run on the queue's worker thread, never concurrently for one
 * queue; callbacks of different queues of the same device run concurrently, so state shared between
 * queues must be immutable after activation or protected by the device.
 */
struct vq_handler_ops {
	/*
	 * A new chain was popped into req (req->priv zeroed). Parse it through vq_reader/vq_writer, then
	 * either complete it now (vq_worker_done) or queue SQEs with vq_worker_get_sqe and return
	 * VQ_REQ_PENDING, or return VQ_REQ_BUSY having queued nothing. A malformed request is completed
	 * with the device's error status, never rejected by crashing.
	 */
	int (*handle)(struct virtio_dev *dev, struct vq_worker *w, struct vq_req *req);
	/*
	 * One CQE of req completed with result res (cqe->res: bytes or -errno). req->inflight was already
	 * decremented. The device may queue more SQEs for req (continue a short read, FLUSH after writes)
	 * and must call vq_worker_done() exactly once, when the request is finished.
	 */
	void (*complete)(struct virtio_dev *dev, struct vq_worker *w, struct vq_req *req, int res);
};

/* How the transport sets up a worker; copied by vq_worker_start. */
struct vq_worker_config {
	struct virtio_dev *dev;
	const struct vq_handler_ops *ops;
	unsigned int queue_index;
	struct virtq *vq;        /* validated by vq_init; owned by the worker until it stops */
	size_t priv_size;        /* bytes of device state per request */
	int kick_fd;             /* ioeventfd on QueueNotify; read by the worker, owned by the transport */
	unsigned int poll_us;    /* busy-poll the avail ring this long before sleeping; 0 = never */
	unsigned int max_inflight; /* SQEs in flight at once (sizes the CQ); 0 = 4 per queue entry,
				      at least 4. When reached, vq_worker_get_sqe returns NULL */
	/*
	 * io_uring restriction (Firecracker's model: work done by io_uring escapes the thread's seccomp
	 * filter, so the ring itself is limited). When allowed_ops is not NULL, the ring is created
	 * disabled, restricted to these IORING_OP_* (plus READ and ASYNC_CANCEL, which the worker itself
	 * uses) and to the SQE flags in allowed_sqe_flags, with no register operation, then enabled. A
	 * refused SQE completes with -EACCES. NULL: unrestricted.
	 */
	const uint8_t *allowed_ops;
	unsigned int nr_allowed_ops; /* at most VQ_WORKER_MAX_OPS */
	uint8_t allowed_sqe_flags;   /* IOSQE_* */
	/* Raise the queue interrupt: set the transport's interrupt status, then signal the irqfd. */
	void (*interrupt)(void *opaque);
	/* The driver broke the protocol on this queue: the transport sets DEVICE_NEEDS_RESET. why is
	 * a static one-line reason naming the rule broken (for the operator), never NULL. Called
	 * once per worker, on the worker's thread. */
	void (*needs_reset)(void *opaque, const char *why);
	void *opaque;            /* for interrupt() and needs_reset() */
};

/*
 * Allocate the slots (one per queue entry), the io_uring (SQ sized to the queue, CQ large enough that
 * it cannot overflow) and the stop eventfd, then start the thread. Returns 0 or -errno.
 * Caller: the transport at DRIVER_OK.
 */
__attribute__((warn_unused_result)) int vq_worker_start(const struct vq_worker_config *cfg,
							struct vq_worker **out);

/* Signal stop, wait until in-flight I/O drained and the thread exited, free everything. NULL ok. */
void vq_worker_stop(struct vq_worker *w);

/*
 * A pause rather than a reset (vhost-user GET_VRING_BASE: the front-end stops a ring it will start
 * again, e.g. to pause or migrate the guest): like vq_worker_stop(), but requests in flight get up to
 * drain_ms to complete normally before they are cancelled, so a pause does not turn them into
 * errors the driver would see. NULL ok.
 */
void vq_worker_stop_drain(struct vq_worker *w, unsigned int drain_ms);

/*
 * For handle()/complete(): an SQE tagged with req (user_data = worker tag), or NULL when max_inflight
 * SQEs are already in flight or the SQ has no room even after submitting what is queued. The caller
 * fills opcode/fd/buffers/flags only and must not change user_data. req->inflight counts it; it is
 * submitted at the latest when the worker next sleeps.
 */
struct io_uring_sqe *vq_worker_get_sqe(struct vq_worker *w, struct vq_req *req);

/*
 * The request is finished: push {chain.head, written} to the used ring (published at the end of the
 * pass) and free the slot. req->inflight must be 0. written = bytes the device wrote into the chain's
 * writable buffers (1.x 2.7.8: the driver relies on it, e.g. the status byte).
 */
void vq_worker_done(struct vq_worker *w, struct vq_req *req, uint32_t written);

/* The queue index this worker serves. */
unsigned int vq_worker_queue_index(const struct vq_worker *w);

/*
 * The driver broke the protocol in a request the device is handling: mark the queue broken and ask
 * the transport for NEEDS_RESET, with `why` (a static one-line string naming the rule) for the
 * operator. The request still has to be finished with vq_worker_done().
 */
void vq_worker_fail_why(struct vq_worker *w, const char *why);

#endif
