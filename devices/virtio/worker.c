/* worker.c: the per-virtqueue thread: kicks, chains, io_uring completions and interrupts in one loop. */
#define _GNU_SOURCE
#include "devices/virtio/worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Tags for the two eventfd reads; request tags are (gen << 32 | slot) with slot < 2^16. */
#define WK_TAG_KICK UINT64_MAX
#define WK_TAG_STOP (UINT64_MAX - 1)
#define WK_TAG_CANCEL (UINT64_MAX - 2)

/* At stop, how long in-flight requests get to complete once cancelled before they are abandoned. */
#define WK_STOP_WAIT_MS 1000

struct vq_worker {
	struct vq_worker_config cfg;
	struct virtq *vq;
	struct io_uring ring;
	int stop_fd;
	pthread_t thread;

	struct vq_req *slots;
	uint32_t nr_slots;
	uint32_t *free_slots; /* stack of free slot indices */
	uint32_t nr_free;
	struct iovec *chain_iov; /* nr_slots * max_segs, for vq_chain.iov */
	struct iovec *io_iov;	 /* nr_slots * max_segs, for the device */
	uint8_t *priv;		 /* nr_slots * priv_stride */
	size_t priv_stride;

	uint64_t kick_buf; /* eventfd counters read by the ring; only the ring writes them */
	uint64_t stop_buf;
	unsigned int inflight_sqes; /* request SQEs handed out and not completed */
	unsigned int max_inflight;
	bool kick_armed;
	bool stopping;
	bool backpressure; /* a chain was given back; retry once something completes */
	bool failed;	   /* NEEDS_RESET was requested; the queue pops nothing more */
	unsigned int busy_reqs;
	uint64_t stop_deadline_us; /* stopping with requests in flight: cancelled at, + the wait */
	uint64_t drain_us;	   /* set before the stop (vq_worker_stop_drain): the graceful wait */
	uint64_t drain_deadline_us; /* stopping: requests may complete normally until then */
	bool loop_done; /* atomic: wk_main returned; the thread touches nothing of ours any more */
	bool abandoning; /* stop gave up on in-flight requests: no SQE is handed out any more */
};

static uint64_t wk_tag(const struct vq_req *req)
{
	return ((uint64_t)req->gen << 32) | req->slot;
}

/* Submit what is queued; errors other than "try later" are logged: the loop cannot fix them. */
static void wk_submit(struct vq_worker *w)
{
	int r = io_uring_submit(&w->ring);
	if (r < 0 && r != -EAGAIN && r != -EBUSY && r != -EINTR)
		fprintf(stderr, "ringvm: virtqueue %u: io_uring_submit: %s\n", w->cfg.queue_index,
			strerror(-r));
}

/* An SQE with no owner yet; submits the queue once when full. */
static struct io_uring_sqe *wk_sqe(struct vq_worker *w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
	if (!sqe) {
		wk_submit(w);
		sqe = io_uring_get_sqe(&w->ring);
	}
	return sqe;
}

static int wk_arm_read(struct vq_worker *w, int fd, uint64_t *buf, uint64_t tag)
{
	struct io_uring_sqe *sqe = wk_sqe(w);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, fd, buf, sizeof(*buf), 0);
	io_uring_sqe_set_data64(sqe, tag);
	return 0;
}

struct io_uring_sqe *vq_worker_get_sqe(struct vq_worker *w, struct vq_req *req)
{
	/* Bounding what is in flight keeps every completion inside the CQ ring. */
	if (w->inflight_sqes >= w->max_inflight || w->abandoning)
		return NULL;
	struct io_uring_sqe *sqe = wk_sqe(w);
	if (!sqe)
		return NULL;
	io_uring_sqe_set_data64(sqe, wk_tag(req));
	req->inflight++;
	w->inflight_sqes++;
	return sqe;
}

unsigned int vq_worker_queue_index(const struct vq_worker *w)
{
	return w->cfg.queue_index;
}

void vq_worker_fail_why(struct vq_worker *w, const char *why)
{
	w->vq->broken = true;
	if (!w->failed) {
		w->failed = true;
		w->cfg.needs_reset(w->cfg.opaque, why ? why : "unknown");
	}
}

void vq_worker_done(struct vq_worker *w, struct vq_req *req, uint32_t written)
{
	if (!req->busy)
		return; /* our own bug: a double completion must not corrupt the free list */
	vq_push(w->vq, req->chain.head, written);
	req->busy = false;
	req->gen++;
	w->free_slots[w->nr_free++] = req->slot;
	w->busy_reqs--;
}

/* Pop and hand chains to the device while slots and SQEs last. */
static void wk_pop_all(struct vq_worker *w)
{
	while (w->nr_free && !w->backpressure && !w->failed) {
		struct vq_req *req = &w->slots[w->free_slots[w->nr_free - 1]];
		int r = vq_pop(w->vq, &req->chain);
		if (r == 0)
			return;
		if (r == -EPROTO) {
			vq_worker_fail_why(w, w->vq->why);
			return;
		}
		if (r < 0) {
			/* A malformed chain: give its buffers back untouched, then NEEDS_RESET. */
			vq_push(w->vq, req->chain.head, 0);
			vq_worker_fail_why(w, w->vq->why);
			return;
		}
		w->nr_free--;
		w->busy_reqs++;
		req->busy = true;
		req->inflight = 0;
		if (w->cfg.priv_size)
			memset(req->priv, 0, w->cfg.priv_size);
		int res = w->cfg.ops->handle(w->cfg.dev, w, req);
		if (res == VQ_REQ_BUSY && req->busy && req->inflight == 0) {
			req->busy = false;
			w->busy_reqs--;
			w->nr_free++;
			vq_unpop(w->vq);
			w->backpressure = true;
		}
	}
}

static void wk_on_cqe(struct vq_worker *w, uint64_t tag, int res)
{
	if (tag == WK_TAG_KICK) {
		w->kick_armed = false;
		/* Re-arm unless stopping; an error other than a retry would spin, so it disarms. */
		if (!w->stopping && (res > 0 || res == -EINTR || res == -EAGAIN))
			w->kick_armed =
				wk_arm_read(w, w->cfg.kick_fd, &w->kick_buf, WK_TAG_KICK) == 0;
		return;
	}
	if (tag == WK_TAG_STOP) {
		w->stopping = true;
		return;
	}
	if (tag == WK_TAG_CANCEL)
		return;
	uint32_t slot = (uint32_t)tag;
	uint32_t gen = (uint32_t)(tag >> 32);
	if (slot >= w->nr_slots)
		return;
	/* Every request tag is an SQE we counted, even one whose request finished early. */
	if (w->inflight_sqes)
		w->inflight_sqes--;
	w->backpressure = false;
	struct vq_req *req = &w->slots[slot];
	if (!req->busy || req->gen != gen || req->inflight == 0)
		return;
	req->inflight--;
	w->cfg.ops->complete(w->cfg.dev, w, req, res);
}

static unsigned int wk_reap(struct vq_worker *w)
{
	unsigned int n = 0;
	struct io_uring_cqe *cqe;
	while (io_uring_peek_cqe(&w->ring, &cqe) == 0) {
		uint64_t tag = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&w->ring, cqe);
		wk_on_cqe(w, tag, res);
		n++;
	}
	return n;
}

static void wk_publish(struct vq_worker *w)
{
	vq_publish(w->vq);
	if (vq_should_notify(w->vq))
		w->cfg.interrupt(w->cfg.opaque);
}

static uint64_t wk_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * Bounded busy-poll: true when there is work (a chain or a CQE) before poll_us ran out. Called with
 * kicks still off (with EVENT_IDX: avail_event left behind), so a driver adding chains meanwhile does
 * not exit to notify: the saved exits are what polling is for.
 */
static bool wk_poll(struct vq_worker *w)
{
	(void)vq_enable_kicks(w->vq, false);
	wk_submit(w);
	uint64_t deadline = wk_now_us() + w->cfg.poll_us;
	do {
		if (io_uring_cq_ready(&w->ring))
			return true;
		/* A broken ring (negative count) is work too: the loop reports it. */
		if (!w->backpressure && w->nr_free && !w->failed && vq_avail_count(w->vq) != 0)
			return true;
		__builtin_ia32_pause();
	} while (wk_now_us() < deadline);
	return false;
}

/* Cancel the pending kick read so the ring holds no reference to kick_buf when it is freed. */
static void wk_cancel_kick(struct vq_worker *w)
{
	if (!w->kick_armed)
		return;
	struct io_uring_sqe *sqe = wk_sqe(w);
	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, WK_TAG_KICK, 0);
	io_uring_sqe_set_data64(sqe, WK_TAG_CANCEL);
	while (w->kick_armed) {
		struct io_uring_cqe *cqe;
		wk_submit(w);
		if (io_uring_wait_cqe(&w->ring, &cqe) < 0)
			return;
		uint64_t tag = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&w->ring, cqe);
		wk_on_cqe(w, tag, res);
	}
}

/*
 * Stopping with requests still in flight (a READ of a FIFO or of a file system whose server never
 * answers): the first call asks io_uring to cancel every request of the ring (ASYNC_CANCEL_ANY;
 * they complete with -ECANCELED and the device finishes them as errors). Requests that cannot be
 * cancelled (already in a file system's wait that only a fatal signal ends) are abandoned once
 * WK_STOP_WAIT_MS passed: the worker exits anyway, so a device reset and ringvm's exit end in
 * bounded time (wk_abandon). The kernel keeps an abandoned request's file and buffers (guest
 * memory, still mapped) until it ends. Returns the microseconds left to wait, 0 when time is up.
 */
static uint64_t wk_stop_wait(struct vq_worker *w)
{
	uint64_t now = wk_now_us();

	/* A pause (vq_worker_stop_drain) first lets requests complete as they would have. */
	if (w->drain_us && !w->drain_deadline_us)
		w->drain_deadline_us = now + w->drain_us;
	if (!w->stop_deadline_us && now < w->drain_deadline_us)
		return w->drain_deadline_us - now;
	if (!w->stop_deadline_us) {
		struct io_uring_sqe *sqe = wk_sqe(w);

		w->stop_deadline_us = now + WK_STOP_WAIT_MS * 1000u;
		if (sqe) {
			io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
			io_uring_sqe_set_data64(sqe, WK_TAG_CANCEL);
		}
	}
	return now < w->stop_deadline_us ? w->stop_deadline_us - now : 0;
}

/*
 * The stop wait is over: finish every request still open as if its SQEs completed with -ECANCELED,
 * so the device drops what it holds for them (handles, fds: the kernel keeps its own reference to
 * the file until the request really ends) and the used ring says they are done. Their CQEs, if they
 * ever come, land in a ring nobody reads.
 */
static void wk_abandon(struct vq_worker *w)
{
	fprintf(stderr,
		"ringvm: virtqueue %u: %u request(s) did not complete within %d ms of the stop and were "
		"abandoned\n",
		w->cfg.queue_index, w->busy_reqs, WK_STOP_WAIT_MS);
	w->abandoning = true;
	for (uint32_t i = 0; i < w->nr_slots; i++) {
		struct vq_req *req = &w->slots[i];
		while (req->busy && req->inflight) {
			req->inflight--;
			w->cfg.ops->complete(w->cfg.dev, w, req, -ECANCELED);
		}
		if (req->busy)
			vq_worker_done(w, req, 0); /* the device left it open: our side ends it */
	}
	w->inflight_sqes = 0;
	wk_publish(w);
}

static void *wk_main(void *arg)
{
	struct vq_worker *w = arg;
	char name[16];
	snprintf(name, sizeof(name), "vq%u", w->cfg.queue_index);
	(void)pthread_setname_np(pthread_self(), name);
	w->kick_armed = wk_arm_read(w, w->cfg.kick_fd, &w->kick_buf, WK_TAG_KICK) == 0;
	if (wk_arm_read(w, w->stop_fd, &w->stop_buf, WK_TAG_STOP) < 0)
		w->stopping = true;

	for (;;) {
		if (!w->stopping)
			wk_pop_all(w);
		wk_reap(w);
		wk_publish(w);
		/* Drained: no request open and no SQE left that could still touch guest memory. */
		if (w->stopping && w->busy_reqs == 0 && w->inflight_sqes == 0)
			break;
		uint64_t left_us = w->stopping ? wk_stop_wait(w) : 0;
		if (w->stopping && left_us == 0) {
			wk_abandon(w);
			break;
		}
		if (w->cfg.poll_us && !w->stopping && wk_poll(w))
			continue;
		if (!w->stopping && !w->backpressure && !w->failed && w->nr_free &&
		    vq_enable_kicks(w->vq, true))
			continue; /* chains arrived while we were busy: no kick will come for them */
		int r;
		if (w->stopping) {
			struct __kernel_timespec ts = { .tv_sec = (long long)(left_us / 1000000u),
							.tv_nsec = (long long)(left_us % 1000000u) * 1000 };
			struct io_uring_cqe *cqe;
			r = io_uring_submit_and_wait_timeout(&w->ring, &cqe, 1, &ts, NULL);
			if (r == -ETIME)
				r = 0; /* the next pass sees the time is up */
		} else {
			r = io_uring_submit_and_wait(&w->ring, 1);
		}
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			fprintf(stderr, "ringvm: virtqueue %u: io_uring_enter: %s\n",
				w->cfg.queue_index, strerror(-r));
			/* Without its ring the queue cannot progress: report and end the thread; the
			 * kernel cancels this task's requests when it exits. */
			vq_worker_fail_why(w, "the queue's io_uring failed (not the driver's fault)");
			__atomic_store_n(&w->loop_done, true, __ATOMIC_RELEASE);
			return NULL;
		}
	}
	wk_cancel_kick(w);
	__atomic_store_n(&w->loop_done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Limit the (still disabled) ring to what the device and the worker submit, then enable it. */
static int wk_restrict(struct vq_worker *w)
{
	struct io_uring_restriction res[VQ_WORKER_MAX_OPS + 3];
	unsigned int n = 0;
	if (w->cfg.nr_allowed_ops > VQ_WORKER_MAX_OPS)
		return -E2BIG;
	memset(res, 0, sizeof(res));
	for (unsigned int i = 0; i < w->cfg.nr_allowed_ops; i++) {
		res[n].opcode = IORING_RESTRICTION_SQE_OP;
		res[n++].sqe_op = w->cfg.allowed_ops[i];
	}
	res[n].opcode = IORING_RESTRICTION_SQE_OP;
	res[n++].sqe_op = IORING_OP_READ; /* the kick and stop eventfds */
	res[n].opcode = IORING_RESTRICTION_SQE_OP;
	res[n++].sqe_op = IORING_OP_ASYNC_CANCEL; /* the kick read at exit */
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[n++].sqe_flags = w->cfg.allowed_sqe_flags;
	/* Raw io_uring_register(2): Debian's liburing 2.3 declares the helpers but does not export them. */
	if (syscall(__NR_io_uring_register, w->ring.ring_fd, IORING_REGISTER_RESTRICTIONS, res, n) <
	    0)
		return -errno;
	if (syscall(__NR_io_uring_register, w->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL,
		    0) < 0)
		return -errno;
	return 0;
}

static void wk_free(struct vq_worker *w)
{
	free(w->slots);
	free(w->free_slots);
	free(w->chain_iov);
	free(w->io_iov);
	free(w->priv);
	free(w);
}

int vq_worker_start(const struct vq_worker_config *cfg, struct vq_worker **out)
{
	struct vq_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	w->vq = cfg->vq;
	w->nr_slots = cfg->vq->size;
	unsigned int segs = cfg->vq->max_segs;
	w->priv_stride = (cfg->priv_size + 15) & ~(size_t)15;
	w->slots = calloc(w->nr_slots, sizeof(*w->slots));
	w->free_slots = calloc(w->nr_slots, sizeof(*w->free_slots));
	w->chain_iov = calloc((size_t)w->nr_slots * segs, sizeof(struct iovec));
	w->io_iov = calloc((size_t)w->nr_slots * segs, sizeof(struct iovec));
	w->priv = w->priv_stride ? calloc(w->nr_slots, w->priv_stride) : NULL;
	if (!w->slots || !w->free_slots || !w->chain_iov || !w->io_iov ||
	    (w->priv_stride && !w->priv)) {
		wk_free(w);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < w->nr_slots; i++) {
		struct vq_req *req = &w->slots[i];
		req->slot = i;
		req->chain.iov = w->chain_iov + (size_t)i * segs;
		req->io_iov = w->io_iov + (size_t)i * segs;
		req->io_iov_cap = segs;
		req->priv = w->priv ? w->priv + (size_t)i * w->priv_stride : NULL;
		/* Stack order: slot 0 is popped first, which keeps tags readable in traces. */
		w->free_slots[w->nr_slots - 1 - i] = i;
	}
	w->nr_free = w->nr_slots;

	int err;
	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0) {
		err = -errno;
		goto err_free;
	}
	/*
	 * SQ: one entry per request slot plus the two eventfd reads. CQ: every SQE that may be in flight
	 * (max_inflight) plus the two reads, so completions never overflow it.
	 */
	w->max_inflight = cfg->max_inflight ? cfg->max_inflight : 4 * w->nr_slots;
	if (w->max_inflight < 4)
		w->max_inflight = 4;
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE | (cfg->allowed_ops ? IORING_SETUP_R_DISABLED : 0);
	p.cq_entries =
		w->max_inflight + 2 > w->nr_slots + 2 ? w->max_inflight + 2 : w->nr_slots + 2;
	err = io_uring_queue_init_params(w->nr_slots + 2, &w->ring, &p);
	if (err < 0)
		goto err_stop_fd;
	if (cfg->allowed_ops) {
		err = wk_restrict(w);
		if (err < 0)
			goto err_ring;
	}
	/*
	 * Workers take no signals: a signal meant for the VMM (or a vCPU kick) must not land here and
	 * interrupt a ring wait. The mask is inherited by the new thread and restored for the caller.
	 * The synchronous ones stay open: a fault in this thread must reach the process's handler
	 * (the vhost-user SIGBUS guard, ASan's reports) rather than kill the process unseen.
	 */
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&w->thread, NULL, wk_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto err_ring;
	*out = w;
	return 0;

err_ring:
	io_uring_queue_exit(&w->ring);
err_stop_fd:
	close(w->stop_fd);
err_free:
	wk_free(w);
	return err;
}

/* Join the worker, giving up 100 ms after its loop ended (or after the stop wait + 1 s). */
static bool wk_join_bounded(struct vq_worker *w)
{
	uint64_t end = wk_now_us() + w->drain_us + (WK_STOP_WAIT_MS + 1000) * 1000u, done_at = 0;

	for (;;) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 50 * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(w->thread, NULL, &dl) == 0)
			return true;
		uint64_t now = wk_now_us();
		if (!done_at && __atomic_load_n(&w->loop_done, __ATOMIC_ACQUIRE))
			done_at = now;
		if ((done_at && now - done_at >= 100000) || now >= end)
			return false;
	}
}

void vq_worker_stop_drain(struct vq_worker *w, unsigned int drain_ms)
{
	if (!w)
		return;
	/* Written before the stop eventfd: the worker reads it after that write's CQE. */
	w->drain_us = (uint64_t)drain_ms * 1000u;
	vq_worker_stop(w);
}

void vq_worker_stop(struct vq_worker *w)
{
	if (!w)
		return;
	uint64_t one = 1;
	while (write(w->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
	}
	/*
	 * A thread whose ring still has an abandoned request in an io-wq worker cannot finish exiting:
	 * the kernel's thread exit waits for its io-wq, which waits for the file system (until a fatal
	 * signal, e.g. ringvm's own exit). Once the loop is done, nothing of ours is used any more:
	 * leave the rest of its exit to the kernel (detached) instead of waiting for it.
	 */
	if (!wk_join_bounded(w)) {
		if (__atomic_load_n(&w->loop_done, __ATOMIC_ACQUIRE))
			pthread_detach(w->thread);
		else
			pthread_join(w->thread, NULL); /* still serving: a request inline in a syscall */
	}
	io_uring_queue_exit(&w->ring);
	close(w->stop_fd);
	wk_free(w);
}
