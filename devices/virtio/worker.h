/* worker.h: one thread per virtqueue, owning one io_uring, that pops chains and runs the device's I/O. */
#ifndef RINGVM_WORKER_H
#define RINGVM_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include "devices/virtio/uring.h"
#include "devices/virtio/virtq.h"

/*
 * The worker loop, on its own thread, with its own io_uring (no thread pool, no handoff):
 *
 *   arm READ(kick eventfd), READ(stop eventfd) and READ(the device's event fd, if any) on the ring
 *   loop:
 *     pop chains while a request slot is free   -> ops->handle(dev, w, req)
 *       in slices (pace.h): every pace_slice(held) chains, and when the ring runs empty, submit
 *       the queued SQEs, reap, publish; the interrupt may wait for a fuller batch while work is held
 *     reap every CQE: kick/stop/event re-armed (event -> ops->event);
 *                     request CQEs -> ops->complete(dev, w, req, res)
 *     vq_publish(); interrupt if the driver asked (the transport sets its interrupt status; the
 *       eventfd write - irqfd, vhost-user call fd - is an SQE that rides on the next submission)
 *     re-enable kicks (EVENT_IDX avail_event, maybe a batch ahead: ops->batch_kicks); if chains
 *     arrived meanwhile, loop without sleeping
 *     nothing open and nothing to pop: ops->idle
 *     optional busy-poll of the avail ring while no I/O is in flight (adaptive window up to
 *     poll_us, pace.h; a wait on a device is done asleep), then io_uring_submit_and_wait(1)
 *
 * The guest's kick is a KVM ioeventfd on QueueNotify (datamatch = queue index) and is read through
 * the ring (IORING_OP_READ, re-armed), so one io_uring_enter() both submits I/O and sleeps for kicks,
 * completions and stop. CQE user_data is always the worker's own tag (slot index + generation, or a
 * reserved value for kick/stop): never a guest value, so a guest cannot name a slot.
 *
 * Backpressure: when no request slot is free or the device cannot get the SQEs it needs (max_inflight
 * SQEs already in flight, or the SQ full), the chain is given back (vq_unpop) and retried after the
 * next completions; a request is never failed for lack of room. A device waiting for something
 * that is not a completion of its own (virtio-console: the guest opening a port) gives the chain back
 * the same way and writes its event fd when the wait is over.
 *
 * Driver bugs: a broken ring (vq_pop -EPROTO) or a malformed chain (-EBADMSG/-EFAULT: its buffers are
 * given back with used length 0) makes the worker stop popping and ask the transport for
 * DEVICE_NEEDS_RESET; requests in flight still complete.
 *
 * Stop (reset, device teardown): the transport writes the stop eventfd; the worker stops popping,
 * asks io_uring to cancel whatever is still in flight (ASYNC_CANCEL_ANY), waits until every request
 * has completed (its CQEs reaped and vq_worker_done() called) or one second passed, publishes, and
 * goes back to waiting for the next start. A request that neither completes nor cancels (a read the
 * file system never answers) is abandoned, so a reset or ringvm's exit never waits on a guest-chosen
 * file: the device gets complete(-ECANCELED) for it (vq_worker_get_sqe then returns NULL) and the
 * kernel finishes the I/O whenever it can; its CQE, if it ever comes, carries an older epoch in its
 * tag and is dropped. That late I/O still copies into (or out of) the guest memory it was given, so
 * the worker reports the abandon (gm_io_abandoned) and that memory's mappings are never handed back
 * to the address space (vmm/guest_mem.h: gm_unmap). No pthread_cancel.
 *
 * Lifetime: the thread and its io_uring are made once per queue (vq_worker_create), before the
 * process is confined: the ring is sealed to what the device declared (uring.h), and the thread runs
 * the device's per-thread setup (thread_init) and then its own confinement (confine, a seccomp
 * filter) before it ever serves a queue. Every later start (DRIVER_OK, a vhost-user ring) reuses
 * both, so a confined process never needs io_uring_setup or clone again.
 */

struct vq_worker;
struct virtio_dev;

/*
 * A worker that asked for a batched kick (vq_handler_ops.batch_kicks) sleeps at most this long
 * before it looks at the avail ring by itself; the sleep after such a timeout asks for a kick per
 * chain again. Only a driver that waits with fewer chains re-posted than it was asked for (not
 * Linux's virtio_console, which re-posts each buffer it consumed) ever waits that long.
 */
#define VQ_BATCH_SLEEP_MS 10

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
	/*
	 * Optional: per-thread setup of the device (the virtio-fs server's own umask and groups, how it
	 * closes fds: vq_worker_close_fd on w), on the worker's new thread, before it is confined and
	 * before any request. w is the worker this thread serves for its whole life. 0 or -errno (the
	 * worker then fails to create).
	 */
	int (*thread_init)(struct virtio_dev *dev, struct vq_worker *w);
	/*
	 * Optional. The queue's event fd (vq_worker_config.event_fd) fired: something the device
	 * waits for happened on another thread (a port opened, a message to send). Called before the
	 * pass that follows, which retries chains given back with VQ_REQ_BUSY. Submits nothing.
	 */
	void (*event)(struct virtio_dev *dev, struct vq_worker *w);
	/*
	 * Optional. The worker is about to sleep with nothing to do: no request open, and the avail
	 * ring found empty after everything before the last event() (kicks re-enabled). For a device
	 * that acts once the guest's queued buffers are all handled (virtio-console: close a port's
	 * host side, report a drain). Called before every such sleep; keep it cheap. Submits nothing.
	 */
	void (*idle)(struct virtio_dev *dev, struct vq_worker *w);
	/*
	 * Optional. Asked before each sleep: true when the driver re-posts every buffer of this queue
	 * as it consumes the data in it (a receive queue: Linux's virtio_console input port does), and
	 * more data can come for them, so kicks may be batched: the worker then asks for one kick per
	 * pace_kick_batch() re-posted buffers (EVENT_IDX avail_event set ahead), never more than the
	 * filled buffers the driver still holds, and sleeps at most VQ_BATCH_SLEEP_MS before it looks
	 * at the ring by itself (a driver that waits with fewer buffers re-posted is served late, never
	 * left waiting). NULL or false: a kick per chain. Submits nothing.
	 */
	bool (*batch_kicks)(struct virtio_dev *dev, struct vq_worker *w);
};

/* How the transport makes a queue's worker; copied by vq_worker_create. */
struct vq_worker_config {
	struct virtio_dev *dev;
	const struct vq_handler_ops *ops;
	unsigned int queue_index;
	uint16_t ring_max;       /* largest queue it will serve (sizes the io_uring and the CQ) */
	size_t priv_size;        /* bytes of device state per request */
	int event_fd;            /* an eventfd the device writes to wake the worker (ops->event), owned
				    by the device and open until the worker is destroyed; read by the
				    worker while it serves (one read armed per run); -1 (or no
				    ops->event): none */
	unsigned int poll_us;    /* busy-poll the avail ring at most this long before sleeping (the
				    window adapts below it, pace.h); 0 = never */
	unsigned int max_inflight; /* SQEs in flight at once; 0 = 4 per queue entry, at least 4. When
				      reached, vq_worker_get_sqe returns NULL */
	const struct uring_rules *rules; /* what the ring may do (uring.h); NULL: unrestricted (test
					    devices only) */
	/*
	 * Optional: confine the new thread (a seccomp filter for the calling thread only), after the
	 * device's thread_init, before the first start. 0 or -errno (the worker then fails to create).
	 */
	int (*confine)(void *confine_opaque);
	void *confine_opaque;
	/*
	 * Raise the queue interrupt: set the transport's interrupt status, then either signal it
	 * itself (return -1) or return the eventfd that signals it (an irqfd, a vhost-user call
	 * fd), open as long as the worker may run. The worker then writes that fd through its own
	 * io_uring with its next submission, which it makes before it sleeps or polls, at the
	 * latest at the end of the slice it is in: on this project's PVM host a system call costs
	 * ~1.1 us, as much as the rest of a cached 4 KiB read, and an interrupt every few requests
	 * was one. When that point comes with nothing else to submit (a depth-1 driver: the reply
	 * is out, the worker is about to poll) it is a write(2) instead, a third of the cost of an
	 * io_uring_enter carrying it (0.3 against 0.8 us, measured natively on 2026-12-06). The
	 * transport's status is set before the write is queued (the syscall that submits it orders
	 * both, and vq_publish, before the edge).
	 */
	int (*interrupt)(void *opaque);
	/* The driver broke the protocol on this queue: the transport sets DEVICE_NEEDS_RESET. why is
	 * a static one-line reason naming the rule broken (for the operator), never NULL. Called
	 * once per start, on the worker's thread. */
	void (*needs_reset)(void *opaque, const char *why);
	void *opaque;            /* for interrupt() and needs_reset() */
	/* The queue in the state report (virtq_state.h), e.g. "\"virtio-blk on ...\" q0 request0";
	   must outlive the worker. NULL: "virtqueue N". */
	const char *name;
};

/*
 * Make the queue's io_uring (SQ sized to ring_max, CQ large enough that it cannot overflow, sealed to
 * cfg->rules) and stop eventfd, and start its thread, which runs thread_init and confine and then
 * waits for vq_worker_start. Returns 0 once the thread is ready, or -errno (its thread_init's or
 * confine's error included) with nothing left behind. Caller: the transport, at setup, before the
 * process is confined (io_uring_setup and clone are denied afterwards); or lazily at the first start
 * when nobody prepared it (unit tests, an unconfined library user).
 */
__attribute__((warn_unused_result)) int vq_worker_create(const struct vq_worker_config *cfg,
							 struct vq_worker **out);

/*
 * Serve vq (validated by vq_init, vq->size <= ring_max; owned by the worker until it stops) with
 * kicks from kick_fd (owned by the transport, read by the worker until it stops): allocate the
 * request slots (one per queue entry) and let the thread loop. The worker must be stopped. 0, or
 * -EINVAL (queue too big), -EBUSY (already running), -ENOMEM, -ECHILD (its thread is gone).
 * Caller: the transport at DRIVER_OK (virtio-mmio) or when a vhost-user ring starts.
 */
__attribute__((warn_unused_result)) int vq_worker_start(struct vq_worker *w, struct virtq *vq,
							int kick_fd);

/*
 * Signal stop and wait until in-flight I/O drained (or was abandoned) and the loop ended; free the
 * slots. The thread and ring stay for the next start. NULL or a stopped worker: nothing.
 */
void vq_worker_stop(struct vq_worker *w);

/*
 * A pause rather than a reset (vhost-user GET_VRING_BASE: the front-end stops a ring it will start
 * again, e.g. to pause or migrate the guest): like vq_worker_stop(), but requests in flight get up to
 * drain_ms to complete normally before they are cancelled, so a pause does not turn them into
 * errors the driver would see. NULL ok.
 */
void vq_worker_stop_drain(struct vq_worker *w, unsigned int drain_ms);

/* True between vq_worker_start and vq_worker_stop. */
bool vq_worker_running(const struct vq_worker *w);

/*
 * Stop if running, end the thread (waiting a bounded time: a thread whose ring still has an
 * abandoned request may take until that request ends to exit, and is then left to the kernel),
 * close the ring and the stop eventfd, free. NULL ok. Caller: the transport's teardown.
 */
void vq_worker_destroy(struct vq_worker *w);

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

/*
 * For handle(): the request being handled is the only one the worker holds and no chain waits in
 * the avail ring. A device may then make a transfer that waits on a local device synchronously on
 * this thread (devices/virtio/xfer.h, xfer_sync): alone, that is cheaper than io_uring's round
 * trip (4 KiB O_DIRECT reads natively: 53 us against 74), and there is nothing it could overlap
 * with; the next chain that arrives meanwhile waits for it.
 */
bool vq_worker_alone(struct vq_worker *w);

/*
 * For handle(): the worker holds enough work that the I/O of its slice is cheaper submitted
 * together through io_uring than moved by one system call each (pace.h: pace_ring_batches). A
 * device then leaves a transfer it could make at once (a cached read, xfer_try_nowait) to the ring.
 */
bool vq_worker_batching(struct vq_worker *w);

/*
 * On the worker's thread (handle(), complete() and what they call): close fd with the worker's next
 * submission, as the interrupt writes go, instead of a system call of its own (~1.1 us on this
 * project's PVM host, a fifth of a cached 4 KiB request). The close rides on the next submission
 * the worker makes anyway (I/O, an interrupt), at the latest the one it goes to sleep with; the
 * caller must not use fd again. Without room on the ring, or when the device's rules (cfg.rules)
 * do not allow IORING_OP_CLOSE, it is closed at once.
 */
void vq_worker_close_fd(struct vq_worker *w, int fd);

/* The queue index this worker serves. */
unsigned int vq_worker_queue_index(const struct vq_worker *w);

/*
 * The driver broke the protocol in a request the device is handling: mark the queue broken and ask
 * the transport for NEEDS_RESET, with `why` (a static one-line string naming the rule) for the
 * operator. The request still has to be finished with vq_worker_done().
 */
void vq_worker_fail_why(struct vq_worker *w, const char *why);

#endif
